// The models by name (mmgp/models.hpp) and the two the evaluator runs, eq11 and mmgp, on one communicating node
// computed by hand: the same scenario, the same (m, p), the difference is the communication term alone.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "mmgp/error.hpp"
#include "mmgp/model.hpp"
#include "mmgp/models.hpp"
#include "support.hpp"

using nlohmann::json;

namespace {

// A PS3-like node (H = 2, A = 6, alpha 1.28 from m = 2), data decomposition, 1000 phases each with one 8-byte
// allreduce that the table prices at 20 us with 2 processes on 1 node.
json communicating_node() {
    return json::parse(R"({
        "platform": {"hpu_contexts": 2, "apus": 6, "nodes": 2, "O_offload": 0, "T_csw": 0, "alpha": 1.28,
                     "network": {"tables": [
                         {"primitive": "allreduce", "nodes": 1, "ppn": 2, "points": [[8, 20e-6], [64, 20e-6]]},
                         {"primitive": "allreduce", "nodes": 2, "ppn": 1, "points": [[8, 100e-6], [64, 100e-6]]},
                         {"primitive": "allreduce", "nodes": 2, "ppn": 2, "points": [[8, 150e-6], [64, 150e-6]]}]}},
        "application": {"decomposition": "data", "scaling": "weak", "N": 1000, "T_hpu": 1.0, "T_apu": 60.0, "C_apu": 0,
                        "g": 5e-5, "communication": [{"primitive": "allreduce", "bytes": 8}]},
        "search": {"m": [1, 2], "p": [1, 3], "nodes": 1}})");
}

}  // namespace

TEST_CASE("every model has a unique name, what chooses it and a source; --model parses the application models") {
    std::set<std::string> names;
    int by_option = 0;
    for (const mmgp::model_info& m : mmgp::registered_models()) {
        CAPTURE(m.name);
        CHECK(names.insert(std::string(m.name)).second);
        CHECK_FALSE(m.chosen.empty());
        CHECK_FALSE(m.summary.empty());
        CHECK_FALSE(m.source.empty());
        CHECK_FALSE(m.section.empty());
        CHECK(mmgp::find_model(m.name) == &m);
        const std::string option = "--model " + std::string(m.name);
        if (m.chosen.substr(0, option.size()) != option) continue;
        ++by_option;  // chosen with --model: the evaluator runs it, and its kind names it back
        CHECK(m.role == mmgp::model_role::application);
        mmgp::model_kind k{};
        REQUIRE(mmgp::parse_model(m.name, k));
        CHECK(mmgp::to_string(k) == m.name);
    }
    CHECK(by_option == 2);
    CHECK(names.count("wavefront") == 1);
    CHECK(names.count("latency-bandwidth") == 1);
    CHECK(mmgp::find_model("eq12") == nullptr);
    mmgp::model_kind k{};
    CHECK_FALSE(mmgp::parse_model("eq12", k));
}

TEST_CASE("eq11 and mmgp by hand on one communicating node: the communication term is mmgp's alone") {
    const mmgp::scenario s = mmgp::parse_scenario(communicating_node().dump(), "node.json");
    const mmgp::evaluator eq11(s, mmgp::model_kind::eq11), layered(s, mmgp::model_kind::mmgp);
    const mmgp::configuration c{2, 3, 1, mmgp::policy::edtlp};
    // Eq. 11: alpha(2)*T_hpu + T_apu/(m*p) + C_apu + N*(O_offload + T_csw + O_col + p*g) = 1.28 + 10 + 1000*3*5e-5.
    const double by_hand = 1.28 + 60.0 / 6 + 1000 * 3 * 5e-5;
    CHECK(eq11(c).time_s == doctest::Approx(by_hand).epsilon(1e-12));
    CHECK(eq11(c).parts.communication == 0.0);
    // mmgp: the same terms (m = H, one round, weak scaling splits T_apu over m) plus N * 20 us of allreduce.
    CHECK(layered(c).time_s == doctest::Approx(by_hand + 1000 * 20e-6).epsilon(1e-12));
    CHECK(layered(c).parts.communication == doctest::Approx(1000 * 20e-6).epsilon(1e-12));
    bool ex = true;
    CHECK(eq11.comm_per_phase(2, 1, ex) == 0.0);
    CHECK(ex);  // untouched: eq11 extrapolates nothing
    ex = false;
    CHECK(layered.comm_per_phase(2, 1, ex) == doctest::Approx(20e-6).epsilon(1e-12));
    CHECK_FALSE(ex);  // from the table
    // Each model's row is the same number as its evaluation, and a flag passed in is eq11's to drop.
    for (const mmgp::evaluator* ev : {&eq11, &layered}) {
        bool e = false;
        const double comm = ev->comm_per_phase(2, 1, e);
        CHECK(ev->row_of(2, 1, mmgp::policy::edtlp, comm, e).time(3) == (*ev)(c).time_s);
        CHECK(ev->evaluate(c, comm, e).time_s == (*ev)(c).time_s);
    }
    CHECK_FALSE(eq11.evaluate(c, 0.0, true).parts.extrapolated);
    CHECK(layered.evaluate(c, 0.0, true).parts.extrapolated);
}

TEST_CASE("eq11 refuses several nodes by its name; mmgp evaluates them with the tables") {
    json doc = communicating_node();
    doc["search"]["nodes"] = json::array({1, 2});
    const mmgp::scenario s = mmgp::parse_scenario(doc.dump(), "node.json");
    try {
        mmgp::evaluator ev(s, mmgp::model_kind::eq11);
        FAIL("eq11 accepted nodes 1..2");
    } catch (const mmgp::model_error& e) {
        CHECK(std::string(e.what()).find("nodes 1..1 with --model eq11 (Eq. 11 is a single-node equation") !=
              std::string::npos);
    }
    const mmgp::evaluator layered(s, mmgp::model_kind::mmgp);
    // 2 nodes, 1 process each: T_apu/(m*p) with weak scaling = 60/3; the allreduce costs 100 us from its table.
    CHECK(layered({1, 3, 2, mmgp::policy::edtlp}).time_s ==
          doctest::Approx(1.0 + 60.0 / 3 + 1000 * 3 * 5e-5 + 1000 * 100e-6).epsilon(1e-12));
}

TEST_CASE("mmgp models lists every model, as text and as JSON") {
    const auto text = mmgp::test::run_mmgp("models");
    REQUIRE(text.status == 0);
    const auto doc = mmgp::test::run_mmgp("models --json");
    REQUIRE(doc.status == 0);
    const json j = json::parse(doc.out);
    CHECK(j["kind"] == "models");
    REQUIRE(j["models"].size() == mmgp::registered_models().size());
    for (const mmgp::model_info& m : mmgp::registered_models()) {
        CHECK(text.out.find("  " + std::string(m.name) + " ") != std::string::npos);
        CHECK(text.out.find(std::string(m.source)) != std::string::npos);
    }
    CHECK(j["models"][0]["name"] == "eq11");
    CHECK(j["models"][0]["section"] == "docs/MODEL.md §1");
}
