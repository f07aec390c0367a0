// mmgp calibrate: measure this machine with the calibration harnesses and write a platform profile.
// The harnesses, fitting and the atomic write live in calibration/; this file only wires options and output.
#include <filesystem>
#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <functional>
#include <iostream>

#include "calibrate.hpp"
#include "cmd_calibrate.hpp"
#include "options.hpp"
#include "mmgp/profile.hpp"

namespace mmgp::cli {

void setup_calibrate(CLI::App& app, calibrate_options& o) {
    auto* sub = app.add_subcommand(
        "calibrate", "Measure this machine (off-load round trip, context switch, host contention alpha, data "
                     "transfer) and write a platform profile");
    auto* quick = sub->add_flag("--quick", o.quick, "Fewer repetitions and sizes (under 20 s instead of under 2 minutes)");
    auto* mpi = sub->add_flag("--mpi", o.mpi, "Also measure MPI allreduce and send/recv tables with OpenMPI (as root: extra nodes emulated by network namespaces)");
    sub->add_flag("-q,--quiet", o.quiet, "No progress lines and no summary on standard error");
    add_checked(sub, "-o,--output", o.output, "Write the profile here (atomically); default: standard output");
    auto* hpu = add_checked(sub, "--hpu-cpus", o.hpu_cpus, "CPU list of the host (HPU) contexts, e.g. 0 or 0-7 (default: the "
                                              "first cores/8 cores, at least one)");
    auto* apu = add_checked(sub, "--apu-cpus", o.apu_cpus, "CPU list of the accelerator (APU) cores, e.g. 1-7 (default: one context "
                                              "of every other core)");
    auto* cv = add_checked(sub, "--cv-threshold", o.cv_threshold,
                    "Coefficient of variation above which a parameter is repeated, then flagged (default 0.10)");
    add_checked(sub, "--name", o.name, "Profile name (default host-HOSTNAME)");
    auto* shared = sub->add_flag("--time-shared", o.time_shared,
                  "Describe HPU and APU threads as unpinned software threads time-sharing the cores (cores, T_wake, "
                  "T_csw, T_wake_busy, spin_pause, sched_slice; hpu_contexts = cores, apus = --max-threads): the "
                  "default, since the one backend, host threads, has no accelerator");
    auto* dedicated = sub->add_flag("--dedicated", o.dedicated,
                  "Describe the roles as dedicated hardware instead: hpu_contexts = the HPU role's contexts, apus = the "
                  "APU role's cores (m*p <= APU cores)")
        ->excludes(shared);
    add_checked(sub, "--max-threads", o.max_threads,
                    "With --time-shared: the bound on m*p written as apus (default 4 x cores)");
    add_checked(sub, "--from", o.from,
                "Measure nothing: re-describe this profile written by mmgp calibrate (its measurements) as "
                "time-shared cores")
        ->excludes(dedicated)
        ->excludes(quick)
        ->excludes(mpi)
        ->excludes(hpu)
        ->excludes(apu)
        ->excludes(cv);
    add_checked(sub, "--simulate", o.simulate,
                "Measure nothing: simulate this cluster (a SimGrid platform file) with SMPI and write --node's "
                "profile with the simulated MPI tables (needs --node and --nodes)")
        ->excludes(mpi)
        ->excludes(cv)
        ->excludes(shared);
    add_checked(sub, "--node", o.node, "With --simulate: the platform profile of one node of the cluster (a file or a bundled name: ps3, qs20, triblade)");
    add_checked(sub, "--nodes", o.sim_nodes, "With --simulate: the node counts simulated, LO:HI (powers of two and HI)");
    add_checked(sub, "--accelerator", o.accelerator,
                "cuda or cuda:DEVICE: a GPU node (apus = the GPU's SMs; off-load, copies and the sharing between "
                "processes, with and without MPS, measured by the GPU harness; docs/GPU.md)")
        ->excludes(dedicated)
        ->excludes(shared);
    add_checked(sub, "--ppn", o.ppn,
                "With --simulate: processes per node simulated, 1..N (default: the node's process limit or cores)");
}

void rebase_osu_paths(nlohmann::json& p, const std::string& from, const std::string& output) {
    namespace fs = std::filesystem;
    if (!p.contains("network") || !p["network"].is_object() || !p["network"].contains("tables") ||
        !p["network"]["tables"].is_array())
        return;
    // Each folder as the system opens it: symbolic links resolved (a "link/.." is not the link's parent).
    const auto folder = [](const std::string& file) {
        const fs::path d = fs::path(file).parent_path();
        std::error_code ec;
        fs::path a = fs::weakly_canonical(fs::absolute(d.empty() ? fs::path(".") : d), ec);
        if (ec) a = fs::absolute(d.empty() ? fs::path(".") : d).lexically_normal();
        return a.has_filename() || a == a.root_path() ? a : a.parent_path();
    };
    const fs::path in_dir = folder(from), out_dir = folder(output);
    for (auto& t : p["network"]["tables"]) {
        if (!t.is_object() || !t.contains("osu") || !t["osu"].is_string()) continue;
        const fs::path osu = t["osu"].get<std::string>();
        if (osu.is_absolute()) continue;
        const fs::path where = (in_dir / osu).lexically_normal();
        const fs::path rel = where.lexically_relative(out_dir);
        t["osu"] = (rel.empty() ? where : rel).string();
    }
}

namespace {
/// --from: the calibrated profile at `path`, re-described as time-shared cores. Bad input is an input_error
/// naming the file and the member at fault.
nlohmann::json redescribe(const std::string& path, int max_threads, const std::string& name) {
    const std::string text = read_text_file(path);
    (void)parse_platform(text, path);  // a platform the engine reads (nested within bounds), else the reader's one-line error
    nlohmann::json p = nlohmann::json::parse(text);
    try {
        calib::describe_time_shared(p, max_threads);
    } catch (const calib::incomplete_profile& e) {
        throw input_error(path, e.pointer(), e.what(), e.found());
    } catch (const nlohmann::json::exception& e) {
        throw input_error(path, "/measurements", "the records of mmgp calibrate's harnesses",
                          std::string("a member of another type (") + e.what() + ")");
    }
    if (!name.empty()) p["name"] = name;
    return p;
}
}  // namespace

namespace {
/// A parameter's value whether the profile writes it as a number or as {"value": ...}.
double value_of(const nlohmann::json& j) { return j.is_object() ? j.at("value").get<double>() : j.get<double>(); }

/// The value of the platform key that fills `member` (mmgp/profile_keys.hpp).
template <class T>
double value_of(const nlohmann::json& profile, T platform::*member) {
    return value_of(profile.at(std::string(key_of(member))));
}

/// One row per calibrated parameter (an object with a "value", at any depth below the provenance sections):
/// name, value, spread, repetitions and the noise flag.
void parameter_table(const nlohmann::json& profile) {
    static constexpr const char* skipped[] = {"measurements", "machine", "calibration", "_derivation", "notes"};
    auto shown = [](const nlohmann::json& v, const std::string& unit) {  // unit "": a count or a factor
        if (!v.is_number()) return std::string("-");
        if (unit == "s") return human_time(v.get<double>());
        return unit.size() <= 4 ? fmt::format("{:.4g} {}", v.get<double>(), unit) : fmt::format("{:.4g}", v.get<double>());
    };
    std::vector<std::array<std::string, 5>> rows;
    std::function<void(const nlohmann::json&, const std::string&, int)> walk = [&](const nlohmann::json& j,
                                                                                    const std::string& name, int depth) {
        if (!j.is_object()) return;
        if (j.contains("value") && !j["value"].is_object()) {
            const std::string unit = j.value("unit", std::string(j["value"].is_number_integer() ? "" : "s"));
            rows.push_back({name, shown(j["value"], unit), j.contains("spread") ? "± " + shown(j["spread"], unit) : "",
                            j.contains("repetitions") ? j["repetitions"].dump() : "",
                            j.value("flagged", false) ? j.value("warning", std::string("flagged")) : ""});
            return;
        }
        if (depth < 3)
            for (auto it = j.begin(); it != j.end(); ++it)
                if (name.empty() ? std::find(std::begin(skipped), std::end(skipped), it.key()) == std::end(skipped) : true)
                    walk(it.value(), name.empty() ? it.key() : name + "." + it.key(), depth + 1);
    };
    walk(profile, "", 0);
    std::cerr << fmt::format("mmgp calibrate: {:<28} {:>12} {:>14} {:>5}  {}\n", "parameter", "value", "spread", "reps",
                             "flag");
    for (const auto& r : rows)
        std::cerr << fmt::format("mmgp calibrate: {:<28} {:>12} {:>14} {:>5}  {}\n", r[0], r[1], r[2], r[3], r[4]);
}

/// The end-of-run summary on standard error.
void summarize(const nlohmann::json& profile, const calibrate_options& o) {
    parameter_table(profile);
    const std::string where = o.output.empty() ? "" : ", written to " + o.output;
    if (!o.from.empty()) {
        std::cerr << fmt::format("mmgp calibrate: {} re-described as time-shared cores: {} cores, at most {} threads "
                                 "(m*p), T_wake {}, T_csw {}{}\n",
                                 o.from, value_of(profile, &platform::cores), value_of(profile, &platform::apus),
                                 human_time(value_of(profile, &platform::T_wake)),
                                 human_time(value_of(profile, &platform::T_csw)), where);
        return;
    }
    std::cerr << fmt::format("mmgp calibrate: O_offload {} (min {}), T_csw {}, {} HPU context(s), {} APU(s){}\n",
                             human_time(value_of(profile, &platform::O_offload)),
                             human_time(profile.at(std::string(key_of(&platform::O_offload)))["min"].get<double>()),
                             human_time(value_of(profile, &platform::T_csw)), value_of(profile, &platform::hpu_contexts),
                             value_of(profile, &platform::apus), where);
    const auto& ms = profile["measurements"];
    const auto& sl = ms["sched_slice"];
    std::cerr << fmt::format("mmgp calibrate: spin-wait iteration {}, scheduler slice {}{}\n",
                             human_time(ms["spin_pause"]["median"].get<double>()),
                             sl.value("measurable", false) ? human_time(sl["median"].get<double>())
                                                           : std::string("unmeasurable"),
                             !o.dedicated ? fmt::format(", time-shared: {} cores, T_wake {}, T_csw (futex) {}",
                                                         value_of(profile, &platform::cores),
                                                         human_time(value_of(profile, &platform::T_wake)),
                                                         human_time(value_of(profile, &platform::T_csw)))
                                           : std::string());
}
}  // namespace

int run_calibrate(const calibrate_options& o) {
    // Every form writes a profile: "-" is no file name (once --simulate wrote a file named "-").
    if (o.output == "-") throw usage_error("-o: expected a file name; omit -o to print the profile");
    if (!o.simulate.empty()) return run_calibrate_simulate(o);
    if (!o.accelerator.empty()) return run_calibrate_gpu(o);
    if (!o.node.empty() || !o.sim_nodes.empty() || o.ppn)
        throw usage_error("--node, --nodes and --ppn: expected with --simulate CLUSTER.xml");
    if (o.max_threads && o.dedicated) throw usage_error("--max-threads: only with time-shared cores, not --dedicated");
    if (!o.output.empty()) check_output("-o", o.output, {o.from});  // fail before measuring, not after
    const int max_threads = o.max_threads ? static_cast<int>(*o.max_threads) : 0;
    // An interrupt from here on stops at once and says which file it left alone.
    interrupt_guard guard(o.output);
    nlohmann::json profile;
    if (!o.from.empty()) {
        profile = redescribe(o.from, max_threads, o.name);  // bad input: input_error, exit 2, nothing written
        rebase_osu_paths(profile, o.from, o.output);
    } else {
        calib::calibrate_settings s;
        s.quick = o.quick;
        s.mpi = o.mpi;
        s.hpu_cpus = o.hpu_cpus;
        s.apu_cpus = o.apu_cpus;
        s.cv_threshold = o.cv_threshold;
        s.name = o.name;
        s.time_shared = !o.dedicated;
        s.max_threads = max_threads;
        try {  // bad CPU lists are usage errors: check them before measuring anything
            calib::resolve_roles(calib::detect_topology(), o.hpu_cpus, o.apu_cpus);
        } catch (const std::invalid_argument& e) {
            throw usage_error(e.what());
        }
        // Progress on stderr whatever it is (terminal, log file, pipe): one line per harness.
        if (!o.quiet)
            s.progress = [](const std::string& line) { std::cerr << "mmgp calibrate: " << line << std::endl; };
        try {
            profile = calib::calibrate_platform(s);
        } catch (const std::exception& e) {
            std::cerr << "mmgp: calibrate: a harness failed: " << e.what() << " (nothing written)\n";
            return 1;
        }
    }
    // The profile must be one the engine reads: write_profile checks it before it replaces anything (described
    // --from a file, that file's records are at fault when it does not).
    const described_from from{o.from, "/measurements"};
    write_profile(o.output, profile.dump(2) + "\n", profile_kind::platform, "calibrate", o.from.empty() ? nullptr : &from);
    if (!o.quiet) summarize(profile, o);
    return 0;
}

}  // namespace mmgp::cli
