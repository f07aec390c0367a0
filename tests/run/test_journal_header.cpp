// The journal's header schema (run/tune_journal.hpp): a header written and read back, the keys older journals
// lack read as when they did not exist, and what a header that is not one of ours is refused with.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "mmgp/error.hpp"
#include "tune_journal.hpp"

using nlohmann::json;

namespace {

// An options object with a value for every key: "x" for each, so that the schema's own treatment shows.
json every_key(const std::string& value) {
    json o;
    for (const auto& k : mmgp::run::header_keys()) o[k.key] = value;
    return o;
}

std::string refusal(const json& header) {
    try {
        mmgp::run::header_options(header, "j.jsonl");
    } catch (const mmgp::input_error& e) {
        return e.what();
    }
    return "(accepted)";
}

}  // namespace

TEST_CASE("a journal header: paths that exist made absolute, empty later keys written as older journals read") {
    json o = every_key("");
    o["profile"] = "tests";  // a directory of the source tree: exists where the tests run
    o["app"] = "no-such-file.json";
    const json h = mmgp::run::make_header(o);
    CHECK(h["mmgp_tune"] == 1);
    const json& w = h["options"];
    CHECK(w["profile"] == std::filesystem::absolute("tests").string());
    CHECK(w["app"] == "no-such-file.json");  // kept as given: it may exist where the tune resumes
    CHECK(w["objective"] == "time");
    CHECK(w["max_cost"] == "none");
    CHECK(w["replay_first"] == "random");
    CHECK(w["model"] == "");  // not added later: kept as it is
    CHECK(w["cwd"] == std::filesystem::current_path().string());
    // Read back: every key there, nothing added.
    const json r = mmgp::run::header_options(h, "j.jsonl");
    CHECK(r == w);
}

TEST_CASE("an older journal's header: the keys added later read as their defaults") {
    json o = every_key("x");
    for (const auto& k : mmgp::run::header_keys())
        if (k.how == mmgp::run::header_key::kept::added_later) o.erase(k.key);
    const json r = mmgp::run::header_options({{"mmgp_tune", 1}, {"options", o}}, "j.jsonl");
    CHECK(r["parallel"] == 1);
    CHECK(r["objective"] == "time");
    CHECK(r["max_cost"] == "none");
    CHECK(r["within"].is_null());
    CHECK(r["constants"] == json::array());
    CHECK(r["work"] == "");
    CHECK(r["seed"] == "x");
}

TEST_CASE("a header that is not one this mmgp writes is refused at its key") {
    CHECK(refusal({{"mmgp_tune", 2}, {"options", json::object()}}) ==
          "j.jsonl: line 1, /mmgp_tune: expected 1 (the journal format this mmgp reads and writes), found 2");
    CHECK(refusal({{"mmgp_tune", 1}, {"options", 3}}) ==
          "j.jsonl: line 1, /options: expected an object of the tune's options, found 3");
    const std::string unknown = refusal({{"mmgp_tune", 1}, {"options", {{"colour", "red"}}}});
    CHECK(unknown.find("j.jsonl: line 1, /options/colour: expected one of the keys cwd, profile, app,") == 0);
    CHECK(unknown.find("found the unknown key \"colour\"") != std::string::npos);
}
