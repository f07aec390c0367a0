// The reports of mmgp predict (cmd_predict.cpp runs the search and hands them its records): the human report,
// --json and --csv written while the search streams every configuration (predict_report.cpp), --uncertainty's
// intervals, and a wavefront application's two mappings (predict_wavefront.cpp). Each writes through out_stream,
// in memory independent of the space's size; none searches.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <exception>
#include <iostream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "cost.hpp"
#include "mmgp/uncertainty.hpp"  // the intervals' record

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
    // Drops what is still buffered (an error after the report, before it was flushed: nothing of it is shown, so
    // the error's line is the only output). What was flushed already stays, and the error says so.
    void discard_buffered() { buf_.clear(); }
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

// What the human report shows besides the search's own result, gathered while the search
// streams every configuration: memory independent of the size of the space.
struct human_view {
    space_bounds b;  // the widest over the searched modes: time-sliced rows may reach p where MPS rows stop
    int m_min, m_max, p_min, p_max;  // the grid at the best node count
    bool grid_fits;
    std::vector<double> grid;        // (m - m_min) * width + (p - p_min); NaN: not feasible
    std::vector<char> grid_near;     // the same cells: in the near-optimal set
    std::vector<int> shown_nodes;    // node counts of the per-node table
    std::map<int, ranked> best_at;   // the fastest at each shown node count
    std::optional<ranked> runner, most_m, most_p;

    explicit human_view(const scenario& s);
    /// search_options::visit's call: one configuration, the best, whether it is near-optimal.
    void see(const ranked& x, const ranked& best, bool near);
};

/// The human report of a search whose configurations `v` saw (search_options::visit), with the objective's view.
void human_text(out_stream& out, const scenario& s, model_kind kind, const search_result& r, const human_view& v,
                const goal_view& g);
/// --uncertainty's intervals, as text and as the JSON value of "uncertainty".
void uncertainty_text(out_stream& out, const uncertainty_report& u, bool cluster);
std::string uncertainty_json(const uncertainty_report& u);

/// --json, written while the search evaluates: row() for each configuration the search visits (the document's
/// head before the first), finish() with the search's result, the other objectives' choices and the intervals.
class json_stream {
public:
    json_stream(out_stream& out, const scenario& s, model_kind kind, const search_options& opt, std::int64_t feasible);
    void row(const ranked& x, bool near);
    void finish(const search_result& r, const goal_view& g, const uncertainty_report* u);

private:
    out_stream& out_;
    const scenario& s_;
    model_kind kind_;
    search_options opt_;
    std::int64_t feasible_ = 0, written_ = 0;
};

/// --csv, written while the search evaluates: one row per configuration, `on_front` from a first search of the
/// front (empty when that front was thinned: membership is then not known exactly).
class csv_stream {
public:
    csv_stream(out_stream& out, const scenario& s, const search_result& front_search);
    void row(const ranked& x, bool near);

private:
    out_stream& out_;
    std::vector<std::array<int, 4>> on_front_;  // nodes, m, p, sharing
    bool front_known_ = true, shared_ = false, header_ = false;
};
/// A wavefront application: the accelerator-driven and the host-driven mapping at each node count (predict_wavefront.cpp).
void wavefront_report(out_stream& out, const scenario& s, bool as_json, const std::vector<std::string>& notes = {});

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
