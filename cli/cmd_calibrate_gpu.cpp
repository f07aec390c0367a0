// mmgp calibrate --accelerator cuda[:DEVICE]: a GPU node. The host's keys come from the host harnesses: every
// context the processes may use is a host context (or --hpu-cpus, which may name them all), T_csw and α are measured
// on them, and no CPU plays an accelerator (calib::calibrate_gpu_host); the accelerator's (apus = SMs, O_offload, dma, sharing, T_slice_switch) from
// the GPU harness, a separate executable (calibration/gpu/gpu_harness.cu) this file runs and reads
// (calibration/gpu_describe.cpp turns its record into keys). Nothing is written on failure.
#include <fmt/format.h>

#include <iostream>

#include "calibrate.hpp"
#include "cmd_calibrate.hpp"
#include "gpu_describe.hpp"
#include "options.hpp"  // helper_program()
#include "mmgp/io.hpp"
#include "mmgp/launch.hpp"
#include "mmgp/profile.hpp"
#include "process.hpp"
#include "simulate.hpp"

namespace mmgp::cli {

namespace {

// "cuda" or "cuda:N": the device index.
int device_of(const std::string& accelerator) {
    if (accelerator == "cuda") return 0;
    const std::string digits = accelerator.rfind("cuda:", 0) == 0 ? accelerator.substr(5) : "";
    if (!digits.empty() && digits.size() <= 4 && digits.find_first_not_of("0123456789") == std::string::npos)
        return std::stoi(digits);
    throw usage_error("--accelerator: expected cuda or cuda:DEVICE (a device index), found \"" + accelerator + "\"");
}

// Everything the options can be refused for, before anything runs.
void check_gpu_options(const calibrate_options& o) {
    if (!o.simulate.empty() || o.mpi || !o.apu_cpus.empty() || o.max_threads)
        throw usage_error("--accelerator cuda: expected none of --simulate, --mpi, --apu-cpus, --max-threads "
                          "(the accelerators are the GPU's SMs)");
    if (!o.from.empty() && (!o.hpu_cpus.empty() || o.quick))
        throw usage_error("--accelerator cuda --from: expected neither --hpu-cpus nor --quick (nothing is measured)");
    if (!o.node.empty() || !o.sim_nodes.empty() || o.ppn)
        throw usage_error("--node, --nodes and --ppn: expected with --simulate CLUSTER.xml");
    try {
        calib::gpu_host_roles(calib::detect_topology(), o.hpu_cpus);
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
}

// The most a harness record may take (a record is a few kB): what every other input of mmgp is bounded by.
constexpr std::size_t max_record = std::size_t{16} << 20;

// The harness's record (its standard output, at most max_record), or an exit status: 77 no usable GPU, 1 a
// failure. An interrupt meanwhile stops the harness and ends mmgp by the signal (128 + n), the previous file kept.
int run_harness(const std::string& tool, int device, bool quick, nlohmann::json& record) {
    std::string out;
    const int rc = run::shell(fmt::format("{} --device {}{}", shell_quote(tool), device, quick ? " --quick" : ""), &out,
                              max_record);
    if (mmgp::interrupt_pending()) mmgp::finish_interrupt();
    if (rc == run::output_too_long) {
        std::cerr << "mmgp: calibrate: the GPU harness printed more than 16 MiB (its record is a few kB): stopped it; "
                     "nothing written\n";
        return 2;
    }
    if (rc != 0) return rc == 77 ? 77 : 1;
    try {
        record = nlohmann::json::parse(out);
    } catch (const nlohmann::json::exception& e) {
        std::cerr << "mmgp: calibrate: the GPU harness wrote no JSON record (" << e.what() << ")\n";
        return 1;
    }
    return 0;
}

// --from: a GPU platform calibrated before, described again (host contexts recounted); nothing measured.
int redescribe_gpu(const calibrate_options& o) {
    const std::string text = read_text_file(o.from);
    (void)parse_platform(text, o.from);  // a platform the engine reads, else the reader's one-line error
    nlohmann::json p = nlohmann::json::parse(text);
    try {
        calib::redescribe_gpu_host(p);
    } catch (const calib::incomplete_profile& e) {
        throw input_error(o.from, e.pointer(), e.what(), e.found());
    } catch (const nlohmann::json::exception& e) {
        throw input_error(o.from, "/measurements/gpu", "the GPU harness's record",
                          std::string("a member of another type (") + e.what() + ")");
    }
    if (!o.name.empty()) p["name"] = o.name;
    rebase_osu_paths(p, o.from, o.output);
    const described_from from{o.from, "/measurements/gpu"};
    write_profile(o.output, p.dump(2) + "\n", profile_kind::platform, "calibrate", &from);
    if (!o.quiet)
        std::cerr << fmt::format("mmgp calibrate: {} re-described as a GPU node: {} host contexts, {} SMs x {} slots{}\n",
                                 o.from, p["hpu_contexts"]["value"].get<int>(), p["apus"]["value"].get<int>(),
                                 p.contains("apu_slots") ? p["apu_slots"]["value"].get<int>() : 1,
                                 o.output.empty() ? "" : ", written to " + o.output);
    return 0;
}

}  // namespace

int run_calibrate_gpu(const calibrate_options& o) {
    check_gpu_options(o);
    const int device = device_of(o.accelerator);
    if (o.output == "-") throw usage_error("-o: expected a file name; omit -o to print the profile");
    if (!o.output.empty()) check_output("-o", o.output, {o.from});
    if (!o.from.empty()) return redescribe_gpu(o);
    const std::string tool = helper_program("MMGP_GPU_HARNESS", "mmgp-gpu-harness", "the GPU harness");
    if (tool.empty())
        throw usage_error("--accelerator cuda: this mmgp was built without the GPU harness (install the CUDA toolkit "
                          "so that nvcc is on the PATH, or meson configure -Dcuda=enabled, then rebuild); nothing measured");
    interrupt_guard guard(o.output);
    auto progress = [&](const std::string& line) {
        if (!o.quiet) std::cerr << "mmgp calibrate: " << line << std::endl;
    };
    progress(fmt::format("GPU harness {} on device {}{}", tool, device, o.quick ? " (quick)" : ""));
    nlohmann::json record;
    const int rc = run_harness(tool, device, o.quick, record);
    if (rc == 77) {
        std::cerr << "mmgp: calibrate: no usable GPU (the harness's reason is above); nothing written\n";
        return 1;
    }
    if (rc == 2) return 1;  // said above
    if (rc != 0) {
        std::cerr << "mmgp: calibrate: the GPU harness failed (nothing written)\n";
        return 1;
    }
    calib::calibrate_settings s;
    s.quick = o.quick;
    s.hpu_cpus = o.hpu_cpus;
    s.cv_threshold = o.cv_threshold;
    s.name = o.name.empty() ? "gpu-node" : o.name;
    if (!o.quiet) s.progress = progress;
    nlohmann::json profile = nlohmann::json::object();
    try {
        calib::describe_gpu(profile, record);  // the record first: a bad one is named before the host is measured
        profile = calib::calibrate_gpu_host(s);
        calib::describe_gpu(profile, record);
    } catch (const calib::incomplete_profile& e) {
        std::cerr << "mmgp: calibrate: " << e.what() << " (" << e.pointer() << "; nothing written)\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "mmgp: calibrate: a harness failed: " << e.what() << " (nothing written)\n";
        return 1;
    }
    write_profile(o.output, profile.dump(2) + "\n", profile_kind::platform, "calibrate");
    if (!o.quiet)
        std::cerr << fmt::format("mmgp calibrate: {} SMs, O_offload {}, dma {} + {:.3g} GB/s, sharing {}{}\n",
                                 profile["apus"]["value"].get<int>(), human_time(profile["O_offload"]["value"].get<double>()),
                                 human_time(profile["dma"]["latency_s"].get<double>()),
                                 profile["dma"]["bandwidth_Bps"].get<double>() / 1e9, profile["sharing"].dump(),
                                 o.output.empty() ? "" : ", written to " + o.output);
    return 0;
}

}  // namespace mmgp::cli
