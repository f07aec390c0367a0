// The reports of mmgp predict (cmd_predict.cpp): the human report, --json and --csv written while the search
// streams every configuration (predict_report.cpp), --uncertainty's intervals, and a wavefront application's two
// mappings (predict_wavefront.cpp). Each writes through out_stream, in memory independent of the space's size.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <iostream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "cost.hpp"

namespace mmgp::cli::predict {

// Buffered standard output: the streamed reports write through it in constant memory.
class out_stream {
public:
    // Left by an error: what was written stays (a stream cannot be taken back) and the error's line says so.
    ~out_stream() {
        if (std::uncaught_exceptions() > 0 && (written_ || buf_.size() > 0)) mark_report_incomplete();
        flush();
    }
    template <class... A>
    void print(fmt::format_string<A...> f, A&&... a) {
        fmt::format_to(std::back_inserter(buf_), f, std::forward<A>(a)...);
        if (buf_.size() > (1u << 20)) flush();
    }
    void flush() {
        written_ = written_ || buf_.size() > 0;
        std::cout.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
        std::cout.flush();
        buf_.clear();
    }

private:
    fmt::memory_buffer buf_;
    bool written_ = false;
};

// What the human report needs of the objective: the search's options, the other objectives' choices.
struct goal_view {
    search_options opt;
    bool cluster = false;  // the search spans more than one node count
    std::vector<objective_choice> others;
};

/// The human report: searches with `opt` (its visitor set here), prints the report and, with `uncertainty`, the
/// intervals of the listed configurations; returns the search's result.
search_result human_report(out_stream& out, const scenario& s, model_kind kind, search_options& opt,
                           const std::vector<std::string>& what_if, goal_view& g, bool uncertainty);
/// --json: the configurations written while the search evaluates them; the result in `r`.
void json_report(out_stream& out, const scenario& s, model_kind kind, search_options& opt, search_result& r,
                 const std::vector<std::string>& what_if, bool uncertainty, const goal_view& g);
/// --csv: every configuration, written while the search evaluates it.
search_result csv_report(out_stream& out, const scenario& s, model_kind kind, search_options& opt);
/// A wavefront application: the accelerator-driven and the host-driven mapping at each node count (predict_wavefront.cpp).
void wavefront_report(out_stream& out, const scenario& s, bool as_json);

// A difference of times (seconds) and the name of what differs.
using difference = std::pair<double, const char*>;

inline void largest_first(std::vector<difference>& d) {
    std::sort(d.begin(), d.end(), [](const difference& a, const difference& b) { return std::fabs(a.first) > std::fabs(b.first); });
}

// Appends " host +5.04 s" to a list of differences, after a comma unless the list is empty.
inline void add_difference(std::string& list, const difference& d) {
    list += fmt::format("{} {} {}{}", list.empty() ? "" : ",", d.second, d.first > 0 ? "+" : "-", human_time(std::fabs(d.first)));
}

}  // namespace mmgp::cli::predict
