// The models by name (mmgp/models.hpp): the two the evaluator runs take their names and sources from their Model
// types (model/eq11_model.hpp, model/layered_model.hpp); the wavefront model, the communication models and the
// mmgp model's terms are listed with theirs. `mmgp models` prints the list; --model takes the Model types' names
// (model.cpp).
#include "mmgp/models.hpp"

#include <algorithm>
#include <array>

#include "model/comm.hpp"
#include "model/eq11_model.hpp"
#include "model/layered_model.hpp"

namespace mmgp {

namespace {

constexpr std::array<model_info, 10> models{{
    {detail::eq11_model::name, model_role::application, "--model eq11, or a scenario's \"model\": \"eq11\"",
     "one process, one unit of work, dedicated hardware, a single node: "
     "alpha(m)*T_hpu + T_apu/(m*p) + C_apu + N*(O_offload + T_csw + O_col(m) + p*g)",
     detail::eq11_model::source, "1"},
    {detail::layered_model::name, model_role::application, "--model mmgp or a scenario's \"model\" (the default)",
     "Eq. 11 over nodes, task units and transfers, with the communication term and the terms (host sharing, time-shared cores, GPU sharing)",
     detail::layered_model::source, "3"},
    {"wavefront", model_role::application, "the application's wavefront section",
     "a wavefront sweep over the node counts, mapped accelerator-driven (the accelerators run the ranks) or host-driven",
     "[RR] the Roadrunner reverse-acceleration paper: the Cell Messaging Layer, Sweep3D on 97,920 SPEs", "6"},
    {detail::table_model_name, model_role::communication,
     "a table of the platform's network section for (primitive, nodes, ppn) (the default, or a scenario's "
     "\"communication\": \"table\")",
     "one operation's cost, interpolated linearly in bytes",
     "mpptest/OSU micro-benchmark tables measured on the cluster (mmgp calibrate --mpi), or SimGrid SMPI's simulated "
     "ones (mmgp calibrate --simulate)",
     "2"},
    {detail::latency_bandwidth_model_name, model_role::communication,
     "no table covers (primitive, nodes, ppn): flagged extrapolated; everywhere with a scenario's \"communication\": "
     "\"latency-bandwidth\"",
     "stages x (latency + bytes x per-byte cost), binomial trees for collectives; given, or fitted to the tables by "
     "non-negative least squares",
     "[C] §4.4 (the cluster communication term)", "2"},
    {"host-sharing", model_role::term, "m processes on H host contexts",
     "EDTLP time-shares a context's processes and switches on every off-load; the OS policy runs them in rounds",
     "[R] EDTLP (§5.2); [H] Eq. 8 and [C] Eq. 2 (the contention factor alpha(m))", "3"},
    {"time-shared-cores", model_role::term, "the platform's cores",
     "threads of a CPU-only node time-sharing its cores: rounds of runnable threads, spin-wait convoys, wake-ups",
     "this project's measurements: mmgp calibrate --time-shared (validation/README.md, time-shared cores)", "4"},
    {"mps", model_role::term, "the platform's sharing lists mps",
     "the processes' kernels run at once; the SMs' busy time bounds the run",
     "NVIDIA Multi-Process Service; measured by the GPU harness (validation/gpu/harness.json)", "7"},
    {"time-sliced", model_role::term, "the platform's sharing lists time_sliced",
     "one context's kernels at a time: each wait of an off-load for a grid costs a switch T_slice_switch",
     "CUDA's default sharing without MPS; T_slice_switch measured by the GPU harness", "7"},
    {"block-slots", model_role::term, "the platform's apu_slots above 1",
     "grids beyond one block per SM, through the measured slot curve f(k)",
     "the GPU harness's slot curve (validation/gpu/harness.json)", "7"},
}};

}  // namespace

std::string_view to_string(model_role r) noexcept {
    static constexpr std::pair<model_role, std::string_view> names[] = {
        {model_role::application, "application"}, {model_role::communication, "communication"}, {model_role::term, "term"}};
    for (const auto& [k, n] : names)
        if (k == r) return n;
    return "?";
}

std::span<const model_info> registered_models() noexcept { return models; }

const model_info* find_model(std::string_view name) noexcept {
    const auto it = std::find_if(models.begin(), models.end(), [&](const model_info& m) { return m.name == name; });
    return it == models.end() ? nullptr : &*it;
}

}  // namespace mmgp
