// The journal of a tune: one JSON Lines file, a header with the tune's options (its schema: tune_journal_header.cpp;
// mmgp tune fills and reads back the values in cli/tune_header.cpp), then one line per run, each written whole and
// fsynced before the next run starts; a resumed tune reads it back (tune_journal.cpp). Called by mmgp tune
// (cli/cmd_tune.cpp: open, create, recorded runs) and the loop (tune_loop.cpp: a line per run).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mmgp/tune.hpp"

namespace mmgp::run {

/// One key of the header's options: its name, how its value is kept, and what a journal written before the key
/// existed reads as (also what is written for a text option that was not given).
struct header_key {
    enum class kept {
        value,        ///< as it is; a header without it is not a tune's
        path,         ///< a file, written absolute when it exists (a resumed tune may run from elsewhere)
        added_later,  ///< older journals lack it: they read as `when_missing`
    };
    const char* key;
    kept how = kept::value;
    nlohmann::json when_missing = nullptr;
};

/// The header's option keys, in the order a header is read ("cwd", the directory the tune ran in, aside).
const std::vector<header_key>& header_keys();

/// A new journal's header: format version 1, the time, `options` (a value for each header_keys() key: paths made
/// absolute, an empty text of a key added later written as its when_missing) and the current directory as "cwd".
nlohmann::json make_header(nlohmann::json options);

/// A header's options, checked: version 1, an object, no key but header_keys() and "cwd"; the keys added later
/// that it lacks filled in. Throws input_error at "line 1, /mmgp_tune", "line 1, /options" or
/// "line 1, /options/KEY". The values are the caller's to check.
nlohmann::json header_options(const nlohmann::json& header, const std::string& path);

/// The file, held under an exclusive lock while a tune uses it.
class journal {
public:
    journal() = default;
    journal(const journal&) = delete;
    journal& operator=(const journal&) = delete;
    ~journal();
    /// Opens an existing journal, locks it, and returns the lines that read as JSON; a torn last line (an
    /// interrupted write) is reported (torn_warning()) and cut off before the next line is written, so that a
    /// refused command leaves the file as it was; a bad line before it is bad input, and so is a torn first line
    /// (no header).
    std::vector<nlohmann::json> open(const std::string& path);
    /// A new journal at `path` that exists only with its header (create_file_exclusively; refused when `path`
    /// exists): a crash leaves no journal, never an empty one that the next command would call existing. Then
    /// opened and locked as open() does.
    void create(const std::string& path, const nlohmann::json& header);
    /// One line, written whole and fsynced.
    void append(const nlohmann::json& line);
    bool is_open() const { return fd_ >= 0; }
    const std::string& path() const { return path_; }
    /// After open(): "PATH: line N is torn (an interrupted write): skipped, the K lines before it kept", or "".
    const std::string& torn_warning() const { return torn_warning_; }

private:
    int fd_ = -1;
    std::string path_;
    long long torn_at_ = -1;  ///< >= 0: where a torn last line begins, cut off by the first append()
    std::string torn_warning_;
};

/// What the runs a journal recorded leave for the runs to come.
struct journal_history {
    int next_run_number = 1;  ///< after the largest recorded (runs in flight at an interrupt were not)
    bool any_ran = false;     ///< a run finished (ok or censored): the program can run
    /// > 0 when this session retries the failed runs (--retry-failed): the failures numbered below it are set
    /// aside. The session's mark says so (retry_mark_line), so that a later --resume sets them aside too.
    int retry_failed_before = 0;
    /// With --retry-failed: the failed runs this session sets aside that no earlier retry had (its mark is
    /// written only where there are some).
    int failures_set_aside = 0;
    /// Every run recorded: its configuration's index in the tune's space, and whether it was short.
    std::vector<std::pair<std::size_t, bool>> recorded;
};

/// What a run line says its run took at least beyond its wall time (measurement::run::past_bound_s): a censored run
/// stopped by its progress, its at_least_s (stopped early, tune_options::progress_chosen_z), else its bound_s; 0 for
/// any other run. The loop's line as it ends a run and a resumed journal's read alike.
double past_bound_of(const nlohmann::json& line, bool censored);

/// The line a --retry-failed session appends before its first run: {"mark": "retry_failed",
/// "retries_failed_before": N, "start": ...}, the failures numbered below N set aside by it and by every later
/// --resume, whether or not the session starts a run.
nlohmann::json retry_mark_line(int retries_failed_before);

/// Gives the tuner the runs of `lines` (a journal's, after its header), each checked as a run the tune recorded
/// itself would be, each once. The failed runs are checked but not given where `skip_failed` (--retry-failed), and
/// those numbered below a retry mark's "retries_failed_before" (a session that retried them), or a run line's (the
/// journals before the mark, whose retry sessions marked each run they started).
journal_history add_recorded_runs(const std::vector<nlohmann::json>& lines, const std::string& path, tuner& t,
                                  bool skip_failed = false);

}  // namespace mmgp::run
