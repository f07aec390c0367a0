// mmgp calibrate --accelerator cuda[:DEVICE]: a GPU node. The host's keys (host contexts, T_csw, α) come from the
// host harnesses as for --dedicated; the accelerator's (apus = SMs, O_offload, dma, sharing, T_slice_switch) from
// the GPU harness, a separate executable (calibration/gpu/gpu_harness.cu) this file runs and reads
// (calibration/gpu_describe.cpp turns its record into keys). Nothing is written on failure.
#include <fmt/format.h>

#include <iostream>

#include "calibrate.hpp"
#include "cmd_calibrate.hpp"
#include "gpu_describe.hpp"
#include "mmgp/io.hpp"
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

void check_gpu_options(const calibrate_options& o) {
    if (!o.from.empty() || !o.simulate.empty() || o.mpi || !o.apu_cpus.empty() || o.max_threads)
        throw usage_error("--accelerator cuda: expected none of --from, --simulate, --mpi, --apu-cpus, --max-threads "
                          "(the accelerators are the GPU's SMs)");
}

// The harness's record (its standard output), or an exit status: 77 no usable GPU, 1 a failure.
int run_harness(const std::string& tool, int device, bool quick, nlohmann::json& record) {
    std::string out;
    const int rc = run::shell(fmt::format("'{}' --device {}{}", tool, device, quick ? " --quick" : ""), &out);
    if (rc != 0) return rc == 77 ? 77 : 1;
    try {
        record = nlohmann::json::parse(out);
    } catch (const nlohmann::json::exception& e) {
        std::cerr << "mmgp: calibrate: the GPU harness wrote no JSON record (" << e.what() << ")\n";
        return 1;
    }
    return 0;
}

}  // namespace

int run_calibrate_gpu(const calibrate_options& o) {
    check_gpu_options(o);
    const int device = device_of(o.accelerator);
    if (o.output == "-") throw usage_error("-o: expected a file name; omit -o to print the profile");
    if (!o.output.empty()) check_output("-o", o.output, {});
    const std::string tool = calib::find_program("", "MMGP_GPU_HARNESS", "mmgp-gpu-harness");
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
    if (rc != 0) {
        std::cerr << "mmgp: calibrate: the GPU harness failed (nothing written)\n";
        return 1;
    }
    calib::calibrate_settings s;
    s.quick = o.quick;
    s.hpu_cpus = o.hpu_cpus;
    s.cv_threshold = o.cv_threshold;
    s.name = o.name.empty() ? "gpu-node" : o.name;
    s.time_shared = false;
    if (!o.quiet) s.progress = progress;
    nlohmann::json profile;
    try {
        profile = calib::calibrate_platform(s);
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
