// Replays the fuzzers' seed corpus and every past finding through the fuzz targets' bodies: each input
// ends in a result or an mmgp::error (a crash here is a regression).
#include <doctest/doctest.h>

#include <filesystem>

#include "fuzz/targets.hpp"
#include "support.hpp"

TEST_CASE("fuzz corpus and regressions: accepted or rejected cleanly") {
    namespace fs = std::filesystem;
    int accepted = 0, total = 0;
    const std::pair<const char*, bool (*)(const std::string&)> targets[] = {
        {"tests/fuzz/corpus/profile", mmgp::fuzz::profile_one},
        {"tests/fuzz/regressions/profile", mmgp::fuzz::profile_one},
        {"tests/fuzz/corpus/runs", mmgp::fuzz::runs_one},
        {"tests/fuzz/regressions/runs", mmgp::fuzz::runs_one}};
    for (const auto& [dir, target] : targets) {
        fs::path d = fs::path(MMGP_SOURCE_DIR) / dir;
        if (!fs::exists(d)) continue;
        for (const auto& e : fs::directory_iterator(d)) {
            INFO(e.path().string());
            accepted += target(mmgp::test::slurp(e.path()));
            ++total;
        }
    }
    CHECK(total >= 14);
    // The seed corpus is made of valid files: every one of them is accepted.
    CHECK(accepted >= 14);
}
