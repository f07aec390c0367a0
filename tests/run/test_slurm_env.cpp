// run/slurm_env.hpp: SLURM_JOB_CPUS_PER_NODE's form read into CPUs per node, and the allocation of the environment
// (none outside one, none where its CPUs cannot be read).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "slurm_env.hpp"
#include "support.hpp"

using mmgp::test::env_var;

TEST_CASE("SLURM_JOB_CPUS_PER_NODE's form: counts, repeats, and anything else refused") {
    using mmgp::run::parse_cpus_per_node;
    CHECK(parse_cpus_per_node("4") == std::vector<int>{4});
    CHECK(parse_cpus_per_node("2(x3),1") == std::vector<int>{2, 2, 2, 1});
    CHECK(parse_cpus_per_node("16,8(x2)") == std::vector<int>{16, 8, 8});
    for (const char* bad : {"", "x", "0", "-2", "2(x0)", "2(3)", "2(x3", "2(x3)y", "2,", "2,,1", "4 ", "2(x3),z", " 4",
                            "+4", "2(x 3)", "2(x+3)", "2(x-3)", "2(", "2(x", "1048577"})
        CHECK_MESSAGE(parse_cpus_per_node(bad).empty(), std::string(bad));
    // At most 2^20 nodes in all, however the text repeats them (a text of a few bytes would hold gigabytes).
    CHECK(parse_cpus_per_node("1(x1048576)").size() == 1048576u);
    CHECK(parse_cpus_per_node("1(x1048576),1").empty());
    CHECK(parse_cpus_per_node("1(x1048575),2").size() == 1048576u);
}

TEST_CASE("the allocation of the environment: its job and the fewest CPUs of its nodes; none outside one") {
    using mmgp::run::allocation_from_environment;
    {
        env_var job("SLURM_JOB_ID", "4242"), cpn("SLURM_JOB_CPUS_PER_NODE", "8,2(x2),6");
        const auto a = allocation_from_environment();
        REQUIRE(a);
        CHECK(a->job_id == "4242");
        CHECK(a->cpus == std::vector<int>{8, 2, 2, 6});
        CHECK(a->fewest() == 2);
    }
    {
        env_var job("SLURM_JOB_ID", nullptr), cpn("SLURM_JOB_CPUS_PER_NODE", "8");
        CHECK_FALSE(allocation_from_environment());  // not inside a job
    }
    {
        env_var job("SLURM_JOB_ID", ""), cpn("SLURM_JOB_CPUS_PER_NODE", "8");
        CHECK_FALSE(allocation_from_environment());
    }
    {
        env_var job("SLURM_JOB_ID", "7"), cpn("SLURM_JOB_CPUS_PER_NODE", nullptr);
        CHECK_FALSE(allocation_from_environment());
    }
    {
        env_var job("SLURM_JOB_ID", "7"), cpn("SLURM_JOB_CPUS_PER_NODE", "eight");
        CHECK_FALSE(allocation_from_environment());
    }
    CHECK(mmgp::run::allocation_cpus{}.fewest() == 0);
}
