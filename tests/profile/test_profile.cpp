// Profiles: the accepted forms, bundled references, and every class of bad input with its exact message.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <sstream>
#include <string>

#include "mmgp/error.hpp"
#include "mmgp/io.hpp"
#include "mmgp/profile.hpp"
#include "support.hpp"

using nlohmann::json;

namespace {

// The example, verbatim.
const char* example = R"({"schema": "mmgp/1", "name": "example",
 "platform": {"name": "qs20", "hpu_contexts": 4, "apus": 16, "nodes": 1,
              "O_offload": 7e-8, "T_csw": 2e-6,
              "alpha": {"table": {"1": 1.0, "2": 1.28, "3": 1.28}}},
 "application": {"name": "pbpi", "decomposition": "data", "N": 20000,
                 "T_hpu": 1.3, "T_apu": 370, "C_apu": 1.72, "g": 4e-5,
                 "O_col": {"table": {"1": 0, "2": 1e-5, "3": 2e-5}}},
 "search": {"m": [1, 3], "p": [1, 16], "nodes": [1, 1]}})";

std::string error_of(const std::string& text) {
    try {
        mmgp::parse_scenario(text, "p.json");
    } catch (const mmgp::input_error& e) {
        return e.what();
    }
    return "(no error)";
}

std::string with(const char* pointer, const json& value) {
    json j = json::parse(example);
    j[json::json_pointer(pointer)] = value;
    return j.dump();
}

std::string without(const char* parent, const char* key) {
    json j = json::parse(example);
    j[json::json_pointer(parent)].erase(key);
    return j.dump();
}

// docs/PROFILES.md's table of a profile type's keys: a header and one row "| `key` | req. | meaning |" per key.
template <class Key>
std::string documented_table(std::span<const Key> keys) {
    std::string out = "| key | req. | meaning |\n|---|---|---|\n";
    for (const Key& k : keys) {
        const std::string req = k.required ? "yes" : k.shown_default.empty() ? "no" : "no (" + std::string(k.shown_default) + ")";
        out += "| `" + std::string(k.name) + "` | " + req + " | " + std::string(k.meaning) + " |\n";
    }
    return out;
}

// Where the table under "### `heading`" lies in the document: its first row to the blank line after it.
std::pair<std::size_t, std::size_t> table_in(const std::string& docs, const std::string& heading) {
    const std::size_t section = docs.find("\n### `" + heading + "`\n");
    REQUIRE(section != std::string::npos);
    const std::size_t at = docs.find("\n| key |", section) + 1;
    const std::size_t end = docs.find("\n\n", at) + 1;
    return {at, end - at};
}

bool is_number(std::string_view text) {
    return !text.empty() && text.find_first_not_of("0123456789.e-") == std::string_view::npos;
}

}  // namespace

TEST_CASE("the README's example profile is accepted as written") {
    mmgp::scenario s = mmgp::parse_scenario(example, "example.json");
    CHECK(s.name == "example");
    CHECK(s.plat.hpu_contexts == 4);
    CHECK(s.plat.apus == 16);
    CHECK(s.plat.alpha.kind == mmgp::m_function::form::table);
    CHECK(s.plat.alpha.table[2] == 1.28);
    CHECK(s.app.O_col.table[3] == 2e-5);
    CHECK(s.app.g == 4e-5);
    CHECK(s.space.m.hi == 3);
    CHECK(s.space.p.hi == 16);
    CHECK(s.space.pol == mmgp::policy::edtlp);
    CHECK(s.space.tolerance == 0.05);
}

TEST_CASE("accepted alternative forms: alpha constant / number / linear, O_col number, {value, source} numbers") {
    CHECK_NOTHROW(mmgp::parse_scenario(with("/platform/alpha", {{"constant", 1.28}}), "p.json"));
    CHECK_NOTHROW(mmgp::parse_scenario(with("/platform/alpha", 1.28), "p.json"));
    CHECK_NOTHROW(mmgp::parse_scenario(with("/platform/alpha", {{"linear", {{"intercept", 1.1}, {"slope", 0.2}}}}), "p.json"));
    CHECK_NOTHROW(mmgp::parse_scenario(with("/application/O_col", 1e-5), "p.json"));
    auto s = mmgp::parse_scenario(with("/platform/T_csw", {{"value", 3e-6}, {"source", "a run"}, {"cv", 0.02}}), "p.json");
    CHECK(s.plat.T_csw == 3e-6);
    s = mmgp::parse_scenario(with("/platform/apus", {{"value", 8}, {"source", "spec"}}), "p.json");
    CHECK(s.plat.apus == 8);
}

TEST_CASE("platform and application may be bundled names or files") {
    mmgp::scenario s = mmgp::load_scenario("pbpi-qs20");
    CHECK(s.plat.name == "qs20");
    CHECK(s.app.name == "pbpi");
    CHECK(s.app.T_apu == 370);
    CHECK(s.app.g == mmgp::test::approx(0.8 / 20000));
    mmgp::test::temp_dir d;
    d.write("plat.json", mmgp::test::slurp(MMGP_SOURCE_DIR "/profiles/platforms/ps3.json"));
    std::string f = d.write("scen.json", R"({"schema": "mmgp/1", "platform": "plat.json", "application": "raxml"})");
    s = mmgp::load_scenario(f);
    CHECK(s.plat.name == "ps3");
    CHECK(s.plat.apus == 6);
    CHECK(s.app.decomp == mmgp::decomposition::task);
    CHECK(s.space.m.hi == 6);  // default search: m, p in 1..apus, nodes 1..platform nodes
    CHECK(s.space.nodes.hi == 8);
    for (const char* n : {"ps3", "qs20", "triblade"}) CHECK_NOTHROW(mmgp::load_platform(n));
    for (const char* n : {"pbpi", "raxml", "raxml-42sc"}) CHECK_NOTHROW(mmgp::load_application(n));
    for (const auto& n : mmgp::bundled_names("scenarios")) CHECK_NOTHROW(mmgp::load_scenario(n));
}

TEST_CASE("bad input: one message naming file, JSON path, expected and found") {
    CHECK(error_of(R"({"platform": )").rfind(
              "p.json: (document): expected a JSON document, found parse error at line 1, column 14", 0) == 0);
    CHECK(error_of(with("/application/T_hpu", "fast")) ==
          "p.json: /application/T_hpu: expected a finite number >= 0 (seconds), found the string \"fast\"");
    CHECK(error_of(without("/application", "T_apu")) ==
          "p.json: /application/T_apu: expected a finite number >= 0 (seconds), found nothing (the key is missing)");
    CHECK(error_of(with("/platform/T_csw", -1)) ==
          "p.json: /platform/T_csw: expected a finite number >= 0 (seconds), found the number -1");
    CHECK(error_of(R"({"platform": {"T_csw": 1e999}})") ==
          "p.json: (document): expected a JSON document, found number overflow parsing '1e999'");
    CHECK(error_of(with("/platform/hpu_contexts", 2.5)) ==
          "p.json: /platform/hpu_contexts: expected an integer in [1, 2147483647], found the number 2.5");
    CHECK(error_of(with("/platform/apus", 0)) ==
          "p.json: /platform/apus: expected an integer in [1, 2147483647], found the number 0");
    CHECK(error_of(with("/platform/alpha", {{"table", {{"1", 1.0}, {"2", 1.3}}}})) ==
          "p.json: /platform/alpha/table: expected an entry for m = 3 (the search covers m = 1..3), found entries for m = 1, 2");
    CHECK(error_of(with("/application/O_col", {{"table", {{"1", 0}, {"2", 1e-5}}}})) ==
          "p.json: /application/O_col/table: expected an entry for m = 3 (the search covers m = 1..3), found entries for m = 1, 2");
    CHECK(error_of(with("/search/m", {20, 30})) ==
          "p.json: /search: expected a search space with at least one configuration with m*p <= apus and nodes <= "
          "platform nodes, found an empty space (m 20..30, p 1..16, nodes 1..1 with apus 16 and nodes 1)");
    // With a limit on the processes per node, the message names it: m = 8 fits 16 apus, not 4 processes.
    json limited = json::parse(with("/search/m", {8, 8}));
    limited["platform"]["max_processes_per_node"] = 4;
    CHECK(error_of(limited.dump()) ==
          "p.json: /search: expected a search space with at least one configuration with m*p <= apus, nodes <= "
          "platform nodes and m <= max_processes_per_node, found an empty space (m 8..8, p 1..16, nodes 1..1 with "
          "apus 16 and nodes 1, at most 4 processes per node)");
    CHECK(error_of(with("/search/m", {3, 1})) == "p.json: /search/m: expected [lo, hi] with lo <= hi, found an array of 2");
    CHECK(error_of(with("/search/policy", "fifo")) ==
          "p.json: /search/policy: expected \"edtlp\" or \"os\", found the string \"fifo\"");
    CHECK(error_of(with("/platform/T_cws", 1e-6)) ==
          "p.json: /platform/T_cws: expected one of the keys hpu_contexts, apus, nodes, max_processes_per_node, "
          "O_offload, T_csw, alpha, dma, network, cores, T_wake, T_wake_busy, spin_pause, sched_slice, hierarchy, sharing, "
              "T_slice_switch, apu_slots, slot_time, found the unknown key \"T_cws\"");
    CHECK(error_of(with("/schema", "mmgp/2")) == "p.json: /schema: expected \"mmgp/1\", found the string \"mmgp/2\"");
    CHECK(error_of(with("/platform", "cell9")) ==
          "p.json: /platform: expected an existing file or a bundled platforms name (ps3, ps3-cluster, qs20, triblade), found the "
          "string \"cell9\"");
    CHECK(error_of(with("/application/decomposition", "pipeline")) ==
          "p.json: /application/decomposition: expected \"data\" or \"task\", found the string \"pipeline\"");
    CHECK(error_of(with("/platform/alpha", {{"constant", 1.2}, {"table", {{"1", 1}}}})) ==
          "p.json: /platform/alpha: expected exactly one of \"constant\", \"table\", \"linear\", found 2 of them");
    CHECK(error_of(with("/platform/alpha", 0)) ==
          "p.json: /platform/alpha: expected a finite number > 0 (contention factor), found the number 0");
    CHECK(error_of(R"([1, 2])") == "p.json: (document): expected an object, found an array of 2");
}

TEST_CASE("unreadable and missing files") {
    try {
        mmgp::load_scenario("/nonexistent/dir/x.json");
        FAIL("no error");
    } catch (const mmgp::input_error& e) {
        CHECK(std::string(e.what()) == "/nonexistent/dir/x.json: (document): expected a readable file, found no such file or directory");
    }
    try {
        mmgp::load_scenario("no-such-bundle");
        FAIL("no error");
    } catch (const mmgp::input_error& e) {
        CHECK(std::string(e.what()).find("expected an existing file or a bundled scenarios name (") != std::string::npos);
    }
    mmgp::test::temp_dir d;
    try {
        mmgp::load_scenario(d.path.string() + "/");
        FAIL("no error");
    } catch (const mmgp::input_error& e) {
        CHECK(std::string(e.what()).find("expected a readable JSON file, found something that is not a regular file") != std::string::npos);
    }
}

TEST_CASE("the documented key tables list exactly the schema's keys (one table per profile type)") {
    // docs/PROFILES.md's table under "### `platform`" and "### `application`" is rendered from the key tables;
    // MMGP_WRITE_DOCS=1 writes the rendered tables into it (after a key was added, removed or reworded).
    const std::string docs_path = MMGP_SOURCE_DIR "/docs/PROFILES.md";
    std::string docs = mmgp::test::slurp(docs_path);
    const std::string platform_table = documented_table(mmgp::platform_keys());
    const std::string application_table = documented_table(mmgp::application_keys());
    if (std::getenv("MMGP_WRITE_DOCS")) {
        for (const auto& [heading, table] : {std::pair{"platform", platform_table}, std::pair{"application", application_table}}) {
            const auto [at, size] = table_in(docs, heading);
            docs.replace(at, size, table);
        }
        std::ofstream(docs_path, std::ios::binary) << docs;
    }
    CHECK(docs.substr(table_in(docs, "platform").first, table_in(docs, "platform").second) == platform_table);
    CHECK(docs.substr(table_in(docs, "application").first, table_in(docs, "application").second) == application_table);
    // A default the documentation shows as a number is the member's default.
    const mmgp::platform pl;
    for (const auto& k : mmgp::platform_keys()) {
        INFO("platform." << k.name);
        if (const auto* m = std::get_if<double mmgp::platform::*>(&k.member); m && is_number(k.shown_default))
            CHECK(pl.**m == std::stod(std::string(k.shown_default)));
        if (const auto* m = std::get_if<int mmgp::platform::*>(&k.member); m && is_number(k.shown_default))
            CHECK(pl.**m == std::stoi(std::string(k.shown_default)));
    }
    const mmgp::application app;
    for (const auto& k : mmgp::application_keys()) {
        INFO("application." << k.name);
        if (const auto* m = std::get_if<double mmgp::application::*>(&k.member); m && is_number(k.shown_default))
            CHECK(app.**m == std::stod(std::string(k.shown_default)));
        if (const auto* m = std::get_if<std::int64_t mmgp::application::*>(&k.member); m && is_number(k.shown_default))
            CHECK(app.**m == std::stoll(std::string(k.shown_default)));
    }
    // Every required key is refused when missing, every optional one is not.
    const json base = json::parse(mmgp::test::slurp(MMGP_SOURCE_DIR "/profiles/pbpi-qs20.json"));
    auto check_required = [&](const std::string& part, const auto& keys) {
        json doc = base;
        if (doc[part].is_string()) doc[part] = json::parse(mmgp::test::slurp(std::string(MMGP_SOURCE_DIR "/profiles/") + (part == "platform" ? "platforms/" : "apps/") + doc[part].get<std::string>() + ".json"));
        for (const auto& k : keys) {
            if (!doc[part].contains(std::string(k.name))) continue;
            json without = doc;
            without[part].erase(std::string(k.name));
            bool refused = false;
            try {
                mmgp::parse_scenario(without.dump(), "k.json");
            } catch (const mmgp::input_error&) {
                refused = true;
            }
            INFO(part << "." << k.name);
            CHECK(refused == k.required);
        }
    };
    check_required("platform", mmgp::platform_keys());
    check_required("application", mmgp::application_keys());
}

TEST_CASE("a platform or application document alone is read by the same key tables as a scenario's") {
    const mmgp::platform pl = mmgp::parse_platform(
        R"({"hpu_contexts": 2, "apus": 4, "O_offload": 1e-6, "T_csw": 2e-6, "alpha": 1.2})", "p.json");
    CHECK(pl.apus == 4);
    CHECK(pl.T_csw == 2e-6);
    std::string what = "(no error)";
    try {
        (void)mmgp::parse_platform(R"({"hpu_contexts": 2, "apus": 4, "O_offload": 1e-6, "T_cws": 2e-6, "alpha": 1.2})",
                                   "p.json");
    } catch (const mmgp::input_error& e) {
        what = e.location();
    }
    CHECK(what == "/T_cws");
    const mmgp::application app =
        mmgp::parse_application(R"({"N": 10, "T_hpu": 1, "T_apu": 2, "C_apu": 0, "g": 0, "N_start": 3})", "a.json");
    CHECK(app.N_start == 3);
    CHECK_THROWS_AS(mmgp::parse_application(R"({"N": 10, "T_hpu": 1, "T_apu": 2, "C_apu": 0})", "a.json"),
                    mmgp::input_error);
}

TEST_CASE("freshness: a calibrated platform from another machine, old, thinly measured or noisy is warned about") {
    const std::string same_host = mmgp::host_hash("node-a");
    CHECK(same_host.size() == 16);
    CHECK(same_host != mmgp::host_hash("node-b"));
    CHECK(same_host == mmgp::host_hash("node-a"));
    nlohmann::json doc = {{"schema", "mmgp/1"},
                          {"kind", "platform"},
                          {"name", "host-a"},
                          {"hpu_contexts", 1},
                          {"apus", 1},
                          {"O_offload", {{"value", 3e-7}, {"repetitions", 5}}},
                          {"T_csw", {{"value", 1e-6}, {"repetitions", 5}, {"flagged", true}, {"warning", "noisy: CV 56 %"}}},
                          {"alpha", 1.0},
                          {"machine", {{"host_name", "node-a"}, {"cpu_model", "CPU X"}, {"cores", 4},
                                       {"date", "2026-01-10T08:00:00+0000"}}},
                          {"calibration", {{"tool", "mmgp calibrate"}}}};
    const mmgp::platform pl = mmgp::parse_platform(doc.dump(), "a.json");
    CHECK(pl.provenance.calibrated);
    CHECK(pl.provenance.host_hash == same_host);
    CHECK(pl.provenance.min_repetitions == 5);
    REQUIRE(pl.provenance.flagged.size() == 1);
    CHECK(pl.provenance.flagged[0] == "T_csw: noisy: CV 56 %");
    // 2026-01-10 + 30 days, in seconds since 1970: 2026-01-10 is day 20463.
    const std::int64_t day = 86400, jan10 = 20463 * day;
    auto warnings = [&](const mmgp::machine_fingerprint& here, std::int64_t now, mmgp::freshness_policy policy = {}) {
        return mmgp::platform_warnings(pl, here, now, policy);
    };
    const mmgp::machine_fingerprint home{same_host, "CPU X", 4};
    auto w = warnings(home, jan10 + 30 * day);
    REQUIRE(w.size() == 1);  // only the flag: same machine, 30 days old, 5 repetitions
    CHECK(w[0] == "platform host-a: T_csw: noisy: CV 56 %");
    w = warnings(mmgp::machine_fingerprint{mmgp::host_hash("node-b"), "CPU Y", 8}, jan10 + 91 * day);
    REQUIRE(w.size() == 3);
    CHECK(w[0] == "platform host-a was calibrated on another machine (host; CPU CPU X, here CPU Y; 4 cores, here 8): "
                  "recalibrate with mmgp calibrate");
    CHECK(w[1] == "platform host-a was calibrated 91 days ago (2026-01-10), more than 90 days: recalibrate with mmgp "
                  "calibrate");
    mmgp::freshness_policy strict;
    strict.min_repetitions = 10;
    strict.max_age_days = 365;
    w = warnings(home, jan10 + 91 * day, strict);
    REQUIRE(w.size() == 2);
    CHECK(w[0] == "platform host-a rests on 5 repetition(s) for some parameter, fewer than 10");
    // A platform without a calibration section (a bundled description of another machine) is never stale.
    doc.erase("calibration");
    CHECK(mmgp::platform_warnings(mmgp::parse_platform(doc.dump(), "b.json"), mmgp::machine_fingerprint{}, jan10 + 999 * day)
              .empty());
    // Provenance sections of another shape are left out, never an error.
    doc["calibration"] = {{"tool", "x"}};
    doc["machine"] = {{"cores", "four"}, {"date", "yesterday"}, {"host_hash", 3}};
    const mmgp::platform odd = mmgp::parse_platform(doc.dump(), "c.json");
    CHECK(mmgp::platform_warnings(odd, home, jan10 + 999 * day).size() == 1);  // the flag only
}

TEST_CASE("network tables from OSU micro-benchmarks output, beside the platform file") {
    mmgp::test::temp_dir d;
    d.write("allreduce-2x1.txt", "# OSU MPI Allreduce Latency Test v7.1\n# Datatype: MPI_CHAR.\n"
                                 "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n"
                                 "4                      36.08             29.29             44.85        1000\n"
                                 "64                     40.64             30.26             52.27        1000\n\n"
                                 "1024                   61.53             47.71             74.69        1000\n");
    d.write("latency.txt", "# OSU MPI Latency Test v5.8\n# Size          Latency (us)\n0      1.50\n8      1.52\n");
    d.write("bw.txt", "# OSU MPI Bandwidth Test v5.8\n# Size      Bandwidth (MB/s)\n1      2.91\n");
    d.write("noheader.txt", "4 36.08\n");
    d.write("unordered.txt", "# Size Avg Latency(us)\n64 40\n4 36\n");
    d.write("comma.txt", "# Size Latency (us)\n8 1,30\n");       // a decimal comma: not 1 us
    d.write("junk.txt", "# Size Latency (us)\n8 1.30xyz\n");     // trailing junk: not 1.30 us
    d.write("half.txt", "# Size Latency (us)\n4.5 1.30\n");      // half a byte
    d.write("huge.txt", "# Size Latency (us)\n1e23 1.30\n");     // more bytes than any message
    d.write("column.txt", "# Size Avg Latency(us) Iterations\n8 1.30 10O0\n");
    auto platform_with = [&](const json& tables) {
        json pl = {{"schema", "mmgp/1"}, {"kind", "platform"}, {"name", "osu"}, {"hpu_contexts", 2}, {"apus", 4},
                   {"nodes", 2}, {"O_offload", 1e-7}, {"T_csw", 1e-6}, {"alpha", 1}, {"network", {{"tables", tables}}}};
        return d.write("p.json", pl.dump());
    };
    const std::string path = platform_with(json::array(
        {{{"primitive", "allreduce"}, {"nodes", 2}, {"ppn", 1}, {"osu", "allreduce-2x1.txt"}},
         {{"primitive", "sendrecv"}, {"nodes", 2}, {"ppn", 1}, {"osu", "latency.txt"}}}));
    const mmgp::platform pl = mmgp::load_platform(path);  // relative to the platform's directory
    REQUIRE(pl.comm_tables.size() == 2);
    const auto& ar = pl.comm_tables[0].points;
    REQUIRE(ar.size() == 3);
    CHECK(ar[0].bytes == 4);
    CHECK(ar[1].bytes == 64);
    CHECK(ar[1].seconds == mmgp::test::approx(40.64e-6).epsilon(1e-12));
    CHECK(ar[2].seconds == mmgp::test::approx(61.53e-6).epsilon(1e-12));
    CHECK(pl.comm_tables[1].points[0].bytes == 0);
    CHECK(pl.comm_tables[1].points[1].seconds == mmgp::test::approx(1.52e-6).epsilon(1e-12));
    auto refused = [&](const json& table, const std::string& fragment) {
        CAPTURE(fragment);
        const std::string p = platform_with(json::array({table}));
        try {
            (void)mmgp::load_platform(p);
            FAIL("accepted");
        } catch (const mmgp::input_error& e) {
            CHECK(std::string(e.what()).find(fragment) != std::string::npos);
        }
    };
    auto with = [](json extra) {
        json t = {{"primitive", "allreduce"}, {"nodes", 2}, {"ppn", 1}};
        t.update(extra);
        return t;
    };
    refused(with({{"osu", "bw.txt"}}), "bw.txt: line 1: expected the output of an OSU latency test");
    refused(with({{"osu", "noheader.txt"}}), "noheader.txt: line 1: expected an OSU header");
    refused(with({{"osu", "unordered.txt"}}), "unordered.txt: line 3: expected sizes in increasing order");
    refused(with({{"osu", "missing.txt"}}), "/network/tables/0/osu: expected a readable OSU output file, found \"");
    refused(with({{"osu", "latency.txt"}, {"points", {{8, 1e-6}}}}), "/network/tables/0/osu: expected either");
    refused(with({{"osu", 3}}), "/network/tables/0/osu: expected the path of an OSU output file");
    // Every number read is the number written: each column whole, the size a whole count of bytes.
    refused(with({{"osu", "comma.txt"}}), "comma.txt: line 2: expected LATENCY_US (microseconds) as a non-negative number with a decimal point, found \"1,30\"");
    refused(with({{"osu", "junk.txt"}}), "junk.txt: line 2: expected LATENCY_US (microseconds) as a non-negative number, found \"1.30xyz\"");
    refused(with({{"osu", "half.txt"}}), "half.txt: line 2: expected SIZE as a whole number of bytes up to 2^40, found \"4.5\"");
    refused(with({{"osu", "huge.txt"}}), "huge.txt: line 2: expected SIZE as a whole number of bytes up to 2^40, found \"1e23\"");
    refused(with({{"osu", "column.txt"}}), "column.txt: line 2: expected every column as a non-negative number, found \"10O0\"");
    // osu -c: the validation column's "Pass" read past (once refused as not a number); a "Fail" line refused.
    d.write("checked.txt", "# OSU MPI Allreduce Latency Test v7.3\n# Size       Avg Latency(us)        Validation\n"
                           "4 10.0 Pass\n8 11.0 Pass\n");
    d.write("failed.txt", "# Size Avg Latency(us) Validation\n4 10.0 Pass\n8 11.0 Fail\n");
    // osu_barrier: no size column, one number (once refused as a line of fewer than two numbers): 0 bytes.
    d.write("barrier.txt", "# OSU MPI Barrier Latency Test v7.3\n# Avg Latency(us)\n      3.50\n");
    d.write("barrier2.txt", "# Avg Latency(us)\n3.50\n3.60\n");
    // osu_barrier -f: min, max and iterations after the average (not the average read as a size).
    d.write("barrier-f.txt", "# Avg Latency(us)  Min Latency(us)  Max Latency(us)  Iterations\n4.00 3.00 5.00 1000\n");
    const mmgp::platform more = mmgp::load_platform(platform_with(json::array(
        {with({{"osu", "checked.txt"}}), {{"primitive", "barrier"}, {"nodes", 2}, {"ppn", 1}, {"osu", "barrier.txt"}}})));
    REQUIRE(more.comm_tables.size() == 2);
    CHECK(more.comm_tables[0].points.size() == 2);
    CHECK(more.comm_tables[0].points[1].seconds == mmgp::test::approx(11e-6).epsilon(1e-12));
    REQUIRE(more.comm_tables[1].points.size() == 1);
    CHECK(more.comm_tables[1].points[0].bytes == 0);
    CHECK(more.comm_tables[1].points[0].seconds == mmgp::test::approx(3.5e-6).epsilon(1e-12));
    refused(with({{"osu", "failed.txt"}}), "failed.txt: line 3: expected lines whose validation passed (osu -c), found \"Fail\"");
    refused(with({{"osu", "barrier2.txt"}}), "barrier2.txt: line 3: expected one LATENCY_US line (a test without sizes)");
    const mmgp::platform full = mmgp::load_platform(
        platform_with(json::array({{{"primitive", "barrier"}, {"nodes", 2}, {"ppn", 1}, {"osu", "barrier-f.txt"}}})));
    REQUIRE(full.comm_tables.front().points.size() == 1);
    CHECK(full.comm_tables.front().points[0].bytes == 0);
    CHECK(full.comm_tables.front().points[0].seconds == mmgp::test::approx(4e-6).epsilon(1e-12));
}

TEST_CASE("a key given twice in one object is refused with its path and both values, wherever it is") {
    auto refused = [](const std::string& text, const std::string& location, const std::string& found) {
        try {
            (void)mmgp::parse_scenario(text, "dup.json");
            FAIL("accepted: " << text);
        } catch (const mmgp::input_error& e) {
            CHECK(e.file() == "dup.json");
            CHECK(e.location() == location);
            CHECK(e.found() == found);
        }
    };
    const std::string app = R"("application": {"N": 10, "T_hpu": 1, "T_apu": 8, "C_apu": 0.5, "g": 1e-4})";
    const std::string search = R"("search": {"m": [1, 2], "p": [1, 2]})";
    refused(R"({"schema": "mmgp/1", "schema": "mmgp/1", "platform": "qs20", )" + app + ", " + search + "}", "/schema",
            "two: the string \"mmgp/1\" and the string \"mmgp/1\"");
    refused(R"({"schema": "mmgp/1", "platform": "qs20", "application": {"N": 10, "T_hpu": 1, "T_apu": -5, "T_apu": 370,
               "C_apu": 0.5, "g": 1e-4}, )" + search + "}",
            "/application/T_apu", "two: the number -5 and the number 370");
    // Inside an array, and with an object as the second value.
    refused(R"({"schema": "mmgp/1", "platform": {"name": "t", "hpu_contexts": 2, "apus": 4, "O_offload": 1e-7, "T_csw": 1e-6,
               "alpha": 1, "network": {"tables": [{"primitive": "allreduce"}, {"nodes": 1, "nodes": {"a": 1}}]}}, )" +
                app + ", " + search + "}",
            "/platform/network/tables/1/nodes", "two: the number 1 and an object");
    // The same key in two objects, and a document that is one value, are no duplicates.
    CHECK_NOTHROW(mmgp::check_unique_keys(R"({"a": {"k": 1}, "b": {"k": 1}, "c": [{"k": 1}, {"k": 2}]})", "ok.json"));
    CHECK_NOTHROW(mmgp::check_unique_keys("5", "scalar.json"));
    CHECK_NOTHROW(mmgp::check_unique_keys("not json {", "bad.json"));
    CHECK_THROWS_AS(mmgp::check_unique_keys(R"([{"k": 1, "k": 1}])", "arr.json", "line 3, "), mmgp::input_error);
}

TEST_CASE("UTF-8: invalid bytes found where they are, quoted values never cut inside a character") {
    CHECK(mmgp::invalid_utf8_at("plain") == 5);
    CHECK(mmgp::invalid_utf8_at("h\xC3\xA9llo") == 6);                 // é
    CHECK(mmgp::invalid_utf8_at("ab\xFF") == 2);
    CHECK(mmgp::invalid_utf8_at("a\xC3") == 1);                          // truncated sequence
    CHECK(mmgp::invalid_utf8_at("\xC0\xAF") == 0);                       // overlong
    CHECK(mmgp::invalid_utf8_at("\xED\xA0\x80") == 0);                   // surrogate
    CHECK(mmgp::invalid_utf8_at("\xF0\x9F\x98\x80!") == 5);              // a 4-byte character
    const std::string e40 = [] {
        std::string s;
        for (int i = 0; i < 40; ++i) s += "\xC3\xA9";
        return s;
    }();
    const std::string cut = mmgp::utf8_prefix(e40, 57);
    CHECK(cut.size() == 56);
    CHECK(mmgp::invalid_utf8_at(cut) == cut.size());
    // A value quoted in an error message stays valid text.
    try {
        (void)mmgp::parse_application("{\"schema\": \"mmgp/1\", \"kind\": \"application\", \"N\": 1, \"T_hpu\": \"" + e40 +
                                          "\", \"T_apu\": 1, \"C_apu\": 0, \"g\": 0}",
                                      "a.json");
        FAIL("accepted");
    } catch (const mmgp::input_error& e) {
        CHECK(mmgp::invalid_utf8_at(e.what()) == std::string(e.what()).size());
    }
}
