// The measured runs a fit, its structure selection or a replayed tune reads (mmgp/fit.hpp's parse_runs and
// read_runs): CSV with a header row, or JSON (an array of runs, or {"runs": [...]}), every value checked, every
// refusal one line naming the file, the row or JSON path, what was expected and what was found; the rows grouped
// into measurements (mmgp/measurement.hpp) and taken back in order for the fit (fit/terms.hpp). Called by
// mmgp fit and mmgp tune --replay (and the fuzz target); calls the JSON reader. Pure but for read_runs, which
// reads its file.
#include "mmgp/fit.hpp"

#include <cctype>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "base/json_reader.hpp"
#include "fit/measured_range.hpp"
#include "fit/terms.hpp"
#include "mmgp/io.hpp"

namespace mmgp {

namespace {

using detail::above;
using detail::json;

constexpr std::int64_t max_count = 1000000000;

std::string trim(std::string s) {
    auto sp = [](unsigned char c) { return std::isspace(c) != 0; };
    while (!s.empty() && sp(static_cast<unsigned char>(s.back()))) s.pop_back();
    std::size_t i = 0;
    while (i < s.size() && sp(static_cast<unsigned char>(s[i]))) ++i;
    return s.substr(i);
}

std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : line) {
        if (ch == ',') {
            out.push_back(trim(cur));
            cur.clear();
        } else {
            cur += ch;
        }
    }
    out.push_back(trim(cur));
    return out;
}

// Reads all of `s` as a number of type T (false: not a number, or something after it).
template <class T>
bool read_whole(const std::string& s, T& v) {
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// The header row of a CSV file of runs and the index of each column read (-1: absent).
struct csv_columns {
    std::vector<std::string> header;
    int header_row = 0;
    int col_m = -1, col_p = -1, col_nodes = -1, col_units = -1, col_time = -1, col_policy = -1, col_cens = -1, col_bound = -1, col_work = -1,
        col_sharing = -1;
    std::vector<std::string> ignored;  ///< the header's other columns

    int* slot(const std::string& h) {
        return h == "m"                                                              ? &col_m
               : h == "p"                                                            ? &col_p
               : h == "nodes"                                                        ? &col_nodes
               : h == "units"                                                        ? &col_units
               : (h == "time_s" || h == "time" || h == "wall_s" || h == "seconds") ? &col_time
               : h == "policy"                                                       ? &col_policy
               : h == "censored"                                                     ? &col_cens
               : h == "bound_s"                                                      ? &col_bound
               : h == "work"                                                         ? &col_work
               : h == "sharing"                                                      ? &col_sharing
                                                                                     : nullptr;
    }
};

// Whether a and b are one edit apart: a letter inserted, removed, changed, or two neighbours swapped.
bool one_edit_apart(std::string_view a, std::string_view b) {
    if (a.size() > b.size()) std::swap(a, b);
    if (b.size() - a.size() > 1 || a == b) return false;
    std::size_t i = 0;
    while (i < a.size() && a[i] == b[i]) ++i;
    if (a.size() == b.size())
        return a.substr(i + 1) == b.substr(i + 1) ||
               (i + 1 < a.size() && a[i] == b[i + 1] && a[i + 1] == b[i] && a.substr(i + 2) == b.substr(i + 2));
    return a.substr(i) == b.substr(i + 1);
}

// The columns named by header row `row` (fields f): each at most once; m, p and the time required. A column one
// edit from a known name of four letters or more is refused as a likely typo (a misspelled `censored` would count
// stopped runs as measured, a misspelled `nodes` would default every run to one node); other columns are listed
// in `ignored`.
csv_columns csv_header(const std::vector<std::string>& f, int row, const std::string& file) {
    csv_columns cols;
    cols.header = f;
    cols.header_row = row;
    const std::string where = "row " + std::to_string(row) + " (header)";
    static constexpr std::string_view long_names[] = {"nodes", "units", "policy", "censored", "time_s", "bound_s",
                                                      "wall_s", "seconds", "time", "sharing"};
    for (int i = 0; i < static_cast<int>(f.size()); ++i) {
        const std::string& h = f[static_cast<std::size_t>(i)];
        if (int* slot = cols.slot(h)) {
            if (*slot >= 0) throw input_error(file, where, "each column once", "a second column \"" + h + "\"");
            *slot = i;
            continue;
        }
        for (std::string_view known : long_names)
            if (one_edit_apart(h, known))
                throw input_error(file, where + ", column " + utf8_prefix(h, 40),
                                  "a known column name (\"" + std::string(known) + "\"? a misspelled column is ignored and "
                                  "its default used)",
                                  "\"" + utf8_prefix(h, 40) + "\", one letter from it");
        cols.ignored.push_back(h);
    }
    std::string have;
    for (const auto& h : f) have += (have.empty() ? "" : ", ") + h;
    for (auto [col, name] : {std::pair{cols.col_m, "m"}, std::pair{cols.col_p, "p"}, std::pair{cols.col_time, "time_s"}})
        if (col < 0) throw input_error(file, where, std::string("a column named ") + name, "the columns " + have);
    return cols;
}

// The run of data row `row` (fields f).
detail::run_row csv_run(const std::vector<std::string>& f, const csv_columns& cols, int row, const std::string& file) {
    const auto& header = cols.header;
    if (f.size() != header.size())
        throw input_error(file, "row " + std::to_string(row),
                          std::to_string(header.size()) + " comma-separated fields as in the header (row " +
                              std::to_string(cols.header_row) + ")",
                          std::to_string(f.size()) + " fields");
    auto field = [&](int col) -> const std::string& { return f[static_cast<std::size_t>(col)]; };
    auto fail = [&](int col, const std::string& expected) {
        throw input_error(file, "row " + std::to_string(row) + ", column " + header[static_cast<std::size_t>(col)],
                          expected, "\"" + field(col) + "\"");
    };
    auto integer = [&](int col, std::int64_t dflt) -> std::int64_t {
        if (col < 0) return dflt;
        long long v = 0;
        if (!read_whole(field(col), v) || v < 1 || v > max_count)
            fail(col, "an integer in [1, " + std::to_string(max_count) + "]");
        return v;
    };
    auto seconds = [&](int col, const char* expected) {
        double v = 0;
        if (!read_whole(field(col), v) || !std::isfinite(v) || v <= 0) fail(col, expected);
        return v;
    };
    detail::run_row run;
    run.c.m = static_cast<int>(integer(cols.col_m, 1));
    run.c.p = static_cast<int>(integer(cols.col_p, 1));
    run.c.nodes = static_cast<int>(integer(cols.col_nodes, 1));
    run.units = integer(cols.col_units, 1);
    run.work = integer(cols.col_work, 0);
    run.time_s = seconds(cols.col_time, "a finite number > 0 (seconds)");
    if (!detail::measured_in_range(run.time_s)) fail(cols.col_time, detail::measured_range_text);
    if (cols.col_policy >= 0) {
        if (!parse_policy(field(cols.col_policy), run.c.pol)) fail(cols.col_policy, "edtlp or os");
        run.has_policy = true;
    }
    if (cols.col_sharing >= 0) {
        if (!parse_sharing(field(cols.col_sharing), run.c.share)) fail(cols.col_sharing, "dedicated, mps or time_sliced");
        run.has_sharing = true;
    }
    if (cols.col_cens >= 0) {
        const std::string& s = field(cols.col_cens);
        if (s != "0" && s != "1") fail(cols.col_cens, "0 or 1");
        run.censored = s == "1";
    }
    if (cols.col_bound >= 0 && !field(cols.col_bound).empty())
        run.bound_s = seconds(cols.col_bound, "a finite number > 0 (seconds) or nothing");
    run.where = "row " + std::to_string(row);
    return run;
}

std::vector<detail::run_row> parse_csv(const std::string& text, const std::string& file, std::vector<std::string>* ignored) {
    // Line ends of any convention: LF, CRLF, and the old Mac's lone CR (else a file of CR-ended lines would be
    // read as one header line).
    std::string lf;
    lf.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i)
        if (text[i] != '\r') lf += text[i];
        else if (i + 1 >= text.size() || text[i + 1] != '\n') lf += '\n';
    std::istringstream in(lf);
    std::string line;
    int row = 0;
    std::optional<csv_columns> cols;  // after the header row
    std::vector<detail::run_row> runs;
    while (std::getline(in, line)) {
        ++row;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        std::string t = trim(line);
        if (t.empty() || t[0] == '#') continue;
        std::vector<std::string> f = split_csv(t);
        if (!cols)
            cols = csv_header(f, row, file);
        else
            runs.push_back(csv_run(f, *cols, row, file)), runs.back().order = runs.size() - 1;
    }
    if (!cols)
        throw input_error(file, "row 1 (header)", "a header row naming the columns m, p, nodes, units, time_s", "no rows");
    if (ignored) *ignored = cols->ignored;
    return runs;
}

std::vector<detail::run_row> parse_json_runs(const std::string& text, const std::string& file) {
    json doc = detail::parse_json(text, file);
    detail::reader r{file};
    const json* arr = &doc;
    std::string base;
    if (doc.is_object()) {
        r.document(doc, "", "runs");
        r.known_keys(doc, "", detail::schema::runs_document);
        if (!doc.contains("runs")) r.fail("/runs", "an array of runs", "nothing (the key is missing)");
        arr = &doc["runs"];
        base = "/runs";
    }
    if (!arr->is_array()) r.fail(base, "an array of runs {\"m\", \"p\", \"nodes\", \"units\", \"time_s\"}", *arr);
    std::vector<detail::run_row> runs;
    for (std::size_t i = 0; i < arr->size(); ++i) {
        std::string ip = detail::child(base, i);
        const json& o = r.object((*arr)[i], ip);
        r.known_keys(o, ip, detail::schema::run);
        detail::run_row run;
        run.c.m = static_cast<int>(r.integer_at(o, ip, "m", 1, max_count));
        run.c.p = static_cast<int>(r.integer_at(o, ip, "p", 1, max_count));
        run.c.nodes = static_cast<int>(r.integer_or(o, ip, "nodes", 1, 1, max_count));
        run.units = r.integer_or(o, ip, "units", 1, 1, max_count);
        run.time_s = r.number_at(o, ip, "time_s", above(0.0, "seconds"));
        if (!detail::measured_in_range(run.time_s)) r.fail(detail::child(ip, "time_s"), detail::measured_range_text, o["time_s"]);
        if (o.contains("policy")) {
            run.c.pol = static_cast<policy>(r.choice(o, ip, "policy", {"edtlp", "os"}, 0, true));
            run.has_policy = true;
        }
        if (o.contains("sharing")) {
            run.c.share = static_cast<accelerator_sharing>(r.choice(o, ip, "sharing", {"dedicated", "mps", "time_sliced"}, 0, true));
            run.has_sharing = true;
        }
        run.where = ip;
        run.order = runs.size();
        runs.push_back(run);
    }
    return runs;
}

}  // namespace

measurement::run detail::run_row::run() const {
    measurement::run r{time_s, censored ? run_outcome::censored : run_outcome::ok};
    r.bound_s = bound_s;
    r.order = order;
    r.where = where;
    return r;
}

std::vector<measurement> detail::group_rows(const std::vector<run_row>& rows) {
    std::vector<measurement> out;
    std::map<std::tuple<run_key, std::int64_t, bool, bool>, std::size_t> index;
    for (const run_row& row : rows) {
        const auto key = std::tuple{key_of(row), row.work, row.has_policy, row.has_sharing};
        const auto [it, first] = index.try_emplace(key, out.size());
        if (first) {
            measurement m;
            m.c = row.c;
            m.units = row.units;
            m.work = row.work;
            m.has_policy = row.has_policy;
            m.has_sharing = row.has_sharing;
            out.push_back(std::move(m));
        }
        out[it->second].runs.push_back(row.run());
    }
    return out;
}

std::vector<detail::run_row> detail::rows_of(const std::vector<measurement>& ms) {
    std::vector<run_row> rows;
    for (const auto& [m, r] : runs_in_order(ms)) {
        if (!r->finished() && !r->is_censored()) continue;  // failed or cancelled: no time to fit
        run_row row;
        row.c = m->c;
        row.units = m->units;
        row.work = m->work;
        row.has_policy = m->has_policy;
        row.has_sharing = m->has_sharing;
        row.time_s = r->time_s;
        row.censored = r->is_censored();
        row.bound_s = r->bound_s;
        row.where = r->where;
        row.order = r->order;
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<measurement> parse_runs(const std::string& text, const std::string& file, bool as_json,
                                    std::vector<std::string>* ignored) {
    if (ignored) ignored->clear();
    return detail::group_rows(as_json ? parse_json_runs(text, file) : parse_csv(text, file, ignored));
}

std::vector<measurement> parse_runs(const std::string& text, const std::string& file, bool as_json) {
    return parse_runs(text, file, as_json, nullptr);
}

std::vector<measurement> read_runs(const std::string& path, std::vector<std::string>* ignored) {
    std::string text = detail::read_file(path);
    std::size_t i = text.find_first_not_of(" \t\r\n");
    bool as_json = path.ends_with(".json") || (i != std::string::npos && (text[i] == '{' || text[i] == '['));
    return parse_runs(text, path, as_json, ignored);
}

std::vector<measurement> read_runs(const std::string& path) { return read_runs(path, nullptr); }

}  // namespace mmgp
