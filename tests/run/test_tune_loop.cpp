// run/: a tune driven through the library alone, as a program embedding it would (no mmgp command): the loop over
// the replay backend with a journal, the journal read back into a fresh tuner (a resume), and a live run of the
// local backend through a launch function of the caller's.
#include <doctest/doctest.h>

#include <sys/resource.h>  // setrlimit: a full disk stood for
#include <unistd.h>  // mkdtemp

#include <csignal>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "mmgp/profile.hpp"
#include "mmgp/tune.hpp"
#include "measured_runs.hpp"
#include "tune_backend.hpp"
#include "tune_journal.hpp"
#include "tune_loop.hpp"
#include "mmgp/words.hpp"

namespace {

// Recorded runs of every (m, p) with m*p <= 4, three each: time_of(m, p) times 1, 1.02, 0.98 (by default
// 1 / (m*p)^0.9).
mmgp::run::recorded_runs recorded(double (*time_of)(int m, int p) = [](int m, int p) { return 1.0 / std::pow(m * p, 0.9); }) {
    mmgp::run::recorded_runs d;
    d.file = "<memory>";
    for (int m = 1; m <= 4; ++m)
        for (int p = 1; m * p <= 4; ++p) {
            const mmgp::configuration c{m, p, 1, mmgp::policy::edtlp};
            d.space.push_back(c);
            for (double f : {1.0, 1.02, 0.98}) d.reps[mmgp::key_of(c)].push_back({time_of(m, p) * f, false, {}});
        }
    return d;
}

std::string temp_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "mmgp-run-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    return tmpl;
}

std::vector<nlohmann::json> read_lines(const std::string& path) {
    std::ifstream in(path);
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
    return out;
}

}  // namespace

TEST_CASE("run: a replayed tune through the library journals every run, and a resume from its journal sees the same") {
    const mmgp::scenario s = mmgp::load_scenario("raxml-qs20");  // the prior: a bundled scenario
    const mmgp::run::recorded_runs d = recorded();
    const std::string dir = temp_dir();
    const std::string path = dir + "/tune.jsonl";

    mmgp::tuner t(s, d.space, {});
    const nlohmann::json header = {{"mmgp_tune", 1}, {"options", {{"by", "test"}}}};
    mmgp::run::loop_result done;
    {
        mmgp::run::journal jr;  // locked while it is open: closed at the end of the tune
        jr.create(path, header);
        auto backend = mmgp::run::replay_backend(d, 7, false);
        backend->attach_journal(jr.path());
        backend->begin();
        done = mmgp::run::run_tune_loop(t, *backend, jr, {}, {1, true, 0.03, mmgp::objective::time});
    }
    REQUIRE_FALSE(done.interrupted_status);
    const mmgp::tune_assessment a = t.assess();
    REQUIRE(a.has_chosen);
    CHECK(a.stop != mmgp::tune_stop::none);

    // The journal: its header, then one line per run the tuner counts, each a draw from its configuration's
    // recorded times; the trace has one entry per run.
    const std::vector<nlohmann::json> lines = read_lines(path);
    REQUIRE(lines.size() == t.run_count() + 1);
    CHECK(lines[0] == header);
    CHECK(done.trace.size() == t.run_count());
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const nlohmann::json& l = lines[i];
        CHECK(l["run"].get<int>() == static_cast<int>(i));
        const mmgp::configuration c{l["m"].get<int>(), l["p"].get<int>(), 1, mmgp::policy::edtlp};
        const auto& reps = d.reps.at(mmgp::key_of(c));
        const double wall = l["wall_s"].get<double>();
        CHECK(std::any_of(reps.begin(), reps.end(), [&](const mmgp::run::recorded_run& r) { return r.time_s == wall; }));
    }

    // Resumed: a fresh tuner given the journal's runs assesses what the first one did.
    mmgp::run::journal again;
    const std::vector<nlohmann::json> read = again.open(path);
    CHECK(again.torn_warning().empty());
    mmgp::tuner t2(s, d.space, {});
    const mmgp::run::journal_history h = mmgp::run::add_recorded_runs(read, path, t2);
    CHECK(h.next_run_number == static_cast<int>(t.run_count()) + 1);
    CHECK(h.any_ran);
    const mmgp::tune_assessment a2 = t2.assess();
    CHECK(a2.runs == a.runs);
    CHECK(a2.chosen == a.chosen);
    CHECK(a2.p_beaten == doctest::Approx(a.p_beaten));
    std::filesystem::remove_all(dir);
}

TEST_CASE("run: a torn last journal line is reported, not read, and cut off by the next line") {
    const std::string dir = temp_dir();
    const std::string path = dir + "/torn.jsonl";
    {
        std::ofstream out(path);
        out << "{\"mmgp_tune\": 1}\n{\"run\": 1, \"m\"";  // the second line cut by a crash
    }
    mmgp::run::journal jr;
    const std::vector<nlohmann::json> lines = jr.open(path);
    CHECK(lines.size() == 1);
    CHECK(jr.torn_warning() == path + ": line 2 is torn (an interrupted write): skipped, the 1 lines before it kept");
    jr.append({{"run", 1}});
    const std::vector<nlohmann::json> after = read_lines(path);
    REQUIRE(after.size() == 2);
    CHECK(after[1] == nlohmann::json({{"run", 1}}));
    std::filesystem::remove_all(dir);
}

TEST_CASE("run: a journal line the disk cannot take whole is cut off again, the journal left with whole lines") {
    const std::string dir = temp_dir();
    const std::string path = dir + "/full.jsonl";
    {
        std::ofstream out(path);
        out << "{\"mmgp_tune\": 1}\n";
    }
    mmgp::run::journal jr;
    REQUIRE(jr.open(path).size() == 1);
    const auto size_before = std::filesystem::file_size(path);
    // A file size limit a few bytes past the journal stands for a full disk: the write stops part-way (EFBIG).
    rlimit old{};
    REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = old;
    small.rlim_cur = static_cast<rlim_t>(size_before + 10);
    REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
    bool threw = false;
    try {
        jr.append({{"run", 1}, {"padding", std::string(200, 'x')}});
    } catch (const mmgp::input_error&) {
        threw = true;
    }
    REQUIRE(setrlimit(RLIMIT_FSIZE, &old) == 0);
    std::signal(SIGXFSZ, old_handler);
    CHECK(threw);
    CHECK(std::filesystem::file_size(path) == size_before);  // once: 10 bytes of a line left torn
    jr.append({{"run", 1}});  // the journal goes on with whole lines
    CHECK(read_lines(path).size() == 2);
    std::filesystem::remove_all(dir);
}

TEST_CASE("run: the local backend runs the caller's launch of a configuration and reports its exit status") {
    const std::vector<mmgp::configuration> space = {{1, 1, 1, mmgp::policy::edtlp}, {2, 1, 1, mmgp::policy::edtlp}};
    // The launch: every rank exits with status 3 when m > 1 (a program broken only for several processes).
    mmgp::run::launch_setup setup;
    setup.plan = [](const mmgp::configuration& c, bool, std::optional<int>) {
        mmgp::launch_plan plan;
        plan.mapping = c;
        for (int r = 0; r < c.m; ++r)
            plan.processes.push_back({r, 1, {}, {"sh", "-c", c.m > 1 ? "exit 3" : "exit 0"}, {}});
        return plan;
    };
    auto backend = mmgp::run::local_backend(setup);
    backend->begin();
    for (const mmgp::configuration& c : space) {
        nlohmann::json line = nlohmann::json::object();
        const mmgp::run::run_start st = backend->start({c, 1, 0, 0}, line);
        REQUIRE(st.verdict == mmgp::run::start_verdict::started);
        CHECK(line["command"].get<std::string>().find("exit") != std::string::npos);
        const std::optional<mmgp::run::run_end> end = backend->wait_any();
        REQUIRE(end);
        CHECK(end->id == st.id);
        CHECK(end->exit_status == (c.m > 1 ? 3 : 0));
        CHECK(end->outcome == (c.m > 1 ? mmgp::run_outcome::failed : mmgp::run_outcome::ok));
        backend->release(end->id);
    }
    backend->close();
}

TEST_CASE("run: a new user's tune journals rivals stopped by the noise, and a resume reads them as stopped early") {
    // A platform and no application profile (as `mmgp tune PLATFORM` runs it); recorded runs in which only
    // m = 1, p = 4 is fast and steady, every other configuration at least twice as slow.
    mmgp::scenario s = mmgp::load_scenario("raxml-qs20");
    s.app = {};
    s.app.decomp = mmgp::decomposition::data;
    s.app.N = 1;
    s.app.units = 4;
    const mmgp::run::recorded_runs d =
        recorded([](int m, int p) { return m == 1 && p == 4 ? 1.0 : 2.0 + 0.1 * (m + p); });
    mmgp::tune_options o;
    o.prior = false;
    o.choose_structure = true;
    o.bound_noise_z = 2.33;  // `--constant bound.noise_z=2.33`
    const std::string dir = temp_dir();
    const std::string path = dir + "/tune.jsonl";
    mmgp::tuner t(s, d.space, o);
    {
        mmgp::run::journal jr;
        jr.create(path, {{"mmgp_tune", 1}, {"options", {{"by", "test"}}}});
        auto backend = mmgp::run::replay_backend(d, 3, false);
        backend->attach_journal(jr.path());
        backend->begin();
        const mmgp::run::loop_result done = mmgp::run::run_tune_loop(t, *backend, jr, {}, {1, true, 0.03, mmgp::objective::time});
        REQUIRE_FALSE(done.interrupted_status);
    }
    const mmgp::tune_assessment a = t.assess();
    REQUIRE(a.has_chosen);
    CHECK(d.space[a.chosen].p == 4);

    // Each run stopped early is censored below the bound factor's bound and marked so in the journal; the tuner
    // counted it as stopped early (it rules nothing out).
    const std::vector<nlohmann::json> lines = read_lines(path);
    int early = 0;
    const std::vector<test::config_run> runs = test::runs_of(t);
    REQUIRE(runs.size() + 1 == lines.size());
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const bool marked = lines[i].value("early_bound", false);
        const mmgp::measurement::run& r = runs[i - 1].second;
        CHECK(r.early == (marked && r.outcome == mmgp::run_outcome::censored));
        if (r.early) ++early;
    }
    CHECK(early >= 1);

    // Resumed from the journal: the same runs, stopped early the same, the same assessment.
    mmgp::run::journal again;
    const std::vector<nlohmann::json> read = again.open(path);
    mmgp::tuner t2(s, d.space, o);
    mmgp::run::add_recorded_runs(read, path, t2);
    REQUIRE(t2.run_count() == t.run_count());
    const std::vector<test::config_run> resumed = test::runs_of(t2);
    for (std::size_t i = 0; i < runs.size(); ++i) CHECK(resumed[i].second.early == runs[i].second.early);
    const mmgp::tune_assessment a2 = t2.assess();
    CHECK(a2.chosen == a.chosen);
    CHECK(a2.p_beaten == doctest::Approx(a.p_beaten));
    std::filesystem::remove_all(dir);
}

TEST_CASE("run: a time for people switches unit where three digits round up to the next one") {
    using mmgp::human_time;
    CHECK(human_time(2.5) == "2.50 s");
    CHECK(human_time(0.0) == "0.00 s");
    CHECK(human_time(0.999) == "999 ms");
    CHECK(human_time(0.99996) == "1.00 s");  // once "1e+03 ms"
    CHECK(human_time(1.5e-3) == "1.5 ms");
    CHECK(human_time(0.99996e-3) == "1 ms");  // once "1e+03 us"
    CHECK(human_time(0.99996e-6) == "1 us");  // once "1e+03 ns"
    CHECK(human_time(5e-9) == "5 ns");
    CHECK(human_time(999000.0) == "999000.00 s");
    CHECK(human_time(1.08e19) == "1.08e+19 s");  // once 20 digits and a point
}

TEST_CASE("run: retry marks set aside the failures numbered below them, as the run lines of older journals did") {
    const mmgp::scenario s = mmgp::load_scenario("raxml-qs20");
    const mmgp::run::recorded_runs d = recorded();
    const auto run_line = [](int n, int m, bool failed) {
        nlohmann::json j = {{"run", n},         {"m", m},        {"p", 1}, {"nodes", 1}, {"policy", "edtlp"},
                            {"wall_s", 1.0 / m}, {"outcome", failed ? "failed" : "ok"}};
        if (failed) j["exit"] = 5;
        return j;
    };
    const auto mark = [](int before) {
        return nlohmann::json{{"mark", "retry_failed"}, {"retries_failed_before", before}, {"start", "2026-01-01T00:00:00Z"}};
    };
    const nlohmann::json header = {{"mmgp_tune", 1}, {"options", nlohmann::json::object()}};
    // The failed runs the tuner was given, and what the journal leaves for the session.
    const auto given = [&](const std::vector<nlohmann::json>& lines, bool retry) {
        mmgp::tuner t(s, d.space, {});
        const mmgp::run::journal_history h = mmgp::run::add_recorded_runs(lines, "j.jsonl", t, retry);
        int failed = 0;
        for (const auto& [c, m] : t.measured())
            for (const auto& r : m.runs) failed += r.outcome == mmgp::run_outcome::failed;
        return std::make_pair(failed, h);
    };
    const std::vector<nlohmann::json> failures = {header, run_line(1, 1, false), run_line(2, 2, true), run_line(3, 4, true)};
    CHECK(given(failures, false).first == 2);
    const auto [retried_failed, retried] = given(failures, true);
    CHECK(retried_failed == 0);
    CHECK(retried.retry_failed_before == 4);
    CHECK(retried.failures_set_aside == 2);  // so the session marks the journal
    // The session's mark: a plain resume sets both aside; a failure after it counts.
    std::vector<nlohmann::json> marked = failures;
    marked.push_back(mark(4));
    CHECK(given(marked, false).first == 0);
    marked.push_back(run_line(4, 2, true));
    CHECK(given(marked, false).first == 1);
    const auto again = given(marked, true);  // a second retry sets aside only the failure after the first's mark anew
    CHECK(again.first == 0);
    CHECK(again.second.failures_set_aside == 1);
    // A mark before any run, and two marks (the larger rules).
    CHECK(given({header, mark(1), run_line(1, 2, true)}, false).first == 1);
    CHECK(given({header, run_line(1, 2, true), mark(2), run_line(2, 4, true), mark(1)}, false).first == 1);
    // An older journal: the mark on the retry session's run line.
    nlohmann::json old_style = run_line(4, 1, false);
    old_style["retries_failed_before"] = 4;
    CHECK(given({header, run_line(1, 1, false), run_line(2, 2, true), run_line(3, 4, true), old_style}, false).first == 0);
    // Nothing failed: nothing set aside, no mark to write.
    CHECK(given({header, run_line(1, 1, false)}, true).second.failures_set_aside == 0);
    // A mark that names runs not recorded yet is refused.
    CHECK_THROWS_AS(given({header, run_line(1, 2, true), mark(3)}, false), mmgp::input_error);
}
