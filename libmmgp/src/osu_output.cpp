// The output of an OSU micro-benchmarks latency test (osu_allreduce, osu_latency, ...) read as a communication
// table's points: '#' lines are comments, the header names the latency column in microseconds, each data line is
// "SIZE LATENCY_US ...". Called by the platform reader (network.tables[].osu); calls the file reader.
#include "detail/osu.hpp"

#include <cmath>
#include <cstdlib>

#include "detail/json_reader.hpp"

namespace mmgp::detail {

namespace {

// A '#' line: true when it is the header naming the latency column; a bandwidth test's header is refused.
bool latency_header(const std::string& line, const std::string& shown, const std::string& where) {
    if (line.find("MB/s") != std::string::npos || line.find("Bandwidth") != std::string::npos)
        throw input_error(shown, where, "the output of an OSU latency test (a \"Latency (us)\" column)", "a bandwidth test");
    return line.find("Latency") != std::string::npos && line.find("(us)") != std::string::npos;
}

// One data line "SIZE LATENCY_US ...", starting at `first`, after the points read so far.
comm_point data_line(const std::string& line, std::size_t first, const std::vector<comm_point>& before,
                     const std::string& shown, const std::string& where) {
    char* rest = nullptr;
    const double bytes = std::strtod(line.c_str() + first, &rest);
    char* after = nullptr;
    const double us = std::strtod(rest, &after);
    if (after == rest || !std::isfinite(bytes) || !std::isfinite(us) || bytes < 0 || us < 0)
        throw input_error(shown, where, "SIZE LATENCY_US (two non-negative numbers)", "\"" + line.substr(first, 40) + "\"");
    if (!before.empty() && bytes <= before.back().bytes)
        throw input_error(shown, where, "sizes in increasing order, above " + format_double(before.back().bytes),
                          format_double(bytes));
    return {bytes, us * 1e-6};
}

}  // namespace

std::vector<comm_point> read_osu(const std::string& osu_path, const std::string& shown) {
    const std::string text = read_file(osu_path);
    std::vector<comm_point> out;
    bool latency = false;
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
            latency = latency_header(line, shown, where) || latency;
            continue;
        }
        if (!latency)
            throw input_error(shown, where, "an OSU header naming the latency column in microseconds before the data",
                              "\"" + line.substr(first, 40) + "\"");
        out.push_back(data_line(line, first, out, shown, where));
    }
    if (out.empty()) throw input_error(shown, "", "at least one SIZE LATENCY_US line", "none");
    return out;
}

}  // namespace mmgp::detail
