// run/slurm_env.hpp: SLURM_JOB_CPUS_PER_NODE's form read into CPUs per node.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "slurm_env.hpp"

TEST_CASE("SLURM_JOB_CPUS_PER_NODE's form: counts, repeats, and anything else refused") {
    using mmgp::run::parse_cpus_per_node;
    CHECK(parse_cpus_per_node("4") == std::vector<int>{4});
    CHECK(parse_cpus_per_node("2(x3),1") == std::vector<int>{2, 2, 2, 1});
    CHECK(parse_cpus_per_node("16,8(x2)") == std::vector<int>{16, 8, 8});
    for (const char* bad : {"", "x", "0", "-2", "2(x0)", "2(3)", "2(x3", "2(x3)y", "2,", "2,,1", "4 ", "2(x3),z"})
        CHECK_MESSAGE(parse_cpus_per_node(bad).empty(), std::string(bad));
}
