// The output of an OSU micro-benchmarks latency test (osu_allreduce, osu_latency, ...) read as a communication
// table's points: '#' lines are comments, the header names the latency column in microseconds, each data line is
// "SIZE LATENCY_US ...". Called by the platform reader (network.tables[].osu); calls the file reader.
#include "profile/osu.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "base/json_reader.hpp"
#include "profile/profile_json.hpp"

namespace mmgp::detail {

namespace {

// A '#' line: true when it is the header naming the latency column; a bandwidth test's header is refused.
bool latency_header(const std::string& line, const std::string& shown, const std::string& where) {
    if (line.find("MB/s") != std::string::npos || line.find("Bandwidth") != std::string::npos)
        throw input_error(shown, where, "the output of an OSU latency test (a \"Latency (us)\" column)", "a bandwidth test");
    return line.find("Latency") != std::string::npos && line.find("(us)") != std::string::npos;
}

// One whitespace-separated number of a data line, read whole: "1,30" (a decimal comma) and "1.30xyz" are refused.
double whole_number(const std::string& token, const std::string& shown, const std::string& where, const char* what) {
    // Decimal only: strtod also takes hexadecimal (0x10 as 16), which OSU never prints.
    const bool decimal = !token.empty() && token.find_first_not_of("0123456789.eE+-") == std::string::npos;
    char* end = nullptr;
    const double v = std::strtod(token.c_str(), &end);
    if (!decimal || end == token.c_str() || end != token.c_str() + token.size() || !std::isfinite(v) || v < 0)  // a NUL too
        throw input_error(shown, where,
                          std::string(what) + " as a non-negative number" +
                              (token.find(',') != std::string::npos ? " with a decimal point" : ""),
                          "\"" + token.substr(0, 40) + "\"");
    return v;
}

// One data line "SIZE LATENCY_US ...", starting at `first`, after the points read so far: every column a whole
// number, the size a whole count of bytes up to 2^40.
comm_point data_line(const std::string& line, std::size_t first, const std::vector<comm_point>& before, bool sized,
                     const std::string& shown, const std::string& where) {
    std::vector<std::string> tokens;
    for (std::size_t at = first; at < line.size();) {
        const std::size_t start = line.find_first_not_of(" \t\r", at);
        if (start == std::string::npos) break;
        const std::size_t end = std::min(line.find_first_of(" \t\r", start), line.size());
        tokens.push_back(line.substr(start, end - start));
        at = end;
    }
    // osu_barrier prints no size column ("# Avg Latency(us)", then one number, or with -f its min, max and
    // iterations): its one line is a point at 0 bytes.
    if (!sized) {
        if (!before.empty())
            throw input_error(shown, where, "one LATENCY_US line (a test without sizes)", "\"" + line.substr(first, 40) + "\"");
        tokens.insert(tokens.begin(), "0");
    }
    if (tokens.size() < 2)
        throw input_error(shown, where, "SIZE LATENCY_US (two non-negative numbers)", "\"" + line.substr(first, 40) + "\"");
    const double bytes = whole_number(tokens[0], shown, where, "SIZE (bytes)");
    if (bytes != std::floor(bytes) || bytes > 0x1p40)
        throw input_error(shown, where, "SIZE as a whole number of bytes up to 2^40", "\"" + tokens[0].substr(0, 40) + "\"");
    const double us = whole_number(tokens[1], shown, where, "LATENCY_US (microseconds)");
    if (us * 1e-6 > max_operation_s)
        throw input_error(shown, where, "LATENCY_US of at most " + format_double(max_operation_s * 1e6) +
                                            " microseconds (one collective's time)", "\"" + tokens[1].substr(0, 40) + "\"");
    // Further columns: numbers (-f: min, max, iterations), or the data check's verdict (-c: "Pass"); a line whose
    // check failed is not a measurement to keep.
    for (std::size_t k = 2; k < tokens.size(); ++k) {
        if (tokens[k] == "Pass") continue;
        if (tokens[k] == "Fail")
            throw input_error(shown, where, "lines whose validation passed (osu -c)", "\"Fail\"");
        whole_number(tokens[k], shown, where, "every column");
    }
    if (!before.empty() && bytes <= before.back().bytes)
        throw input_error(shown, where, "sizes in increasing order, above " + format_double(before.back().bytes),
                          format_double(bytes));
    return {bytes, us * 1e-6};
}

}  // namespace

std::vector<comm_point> read_osu(const std::string& osu_path, const std::string& shown) {
    const std::string text = read_file(osu_path);
    std::vector<comm_point> out;
    bool latency = false, sized = false;  // the header names the latency column; and a size column
    std::size_t line_no = 0;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(at, end - at);
        at = end + 1;
        ++line_no;
        const auto first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos) continue;
        const std::string where = "line " + std::to_string(line_no);
        if (line[first] == '#') {
            if (latency_header(line, shown, where)) {
                latency = true;
                sized = line.find("Size") != std::string::npos;
            }
            continue;
        }
        if (!latency)
            throw input_error(shown, where, "an OSU header naming the latency column in microseconds before the data",
                              "\"" + line.substr(first, 40) + "\"");
        out.push_back(data_line(line, first, out, sized, shown, where));
    }
    if (out.empty()) throw input_error(shown, "", "at least one SIZE LATENCY_US line", "none");
    return out;
}

}  // namespace mmgp::detail
