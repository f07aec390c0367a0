// mmgp: predict the run time of every mapping of a program onto host cores and accelerators.
// Each subcommand lives in cmd_<name>.cpp; errors are printed here, in one place.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cmd_calibrate.hpp"
#include "process.hpp"
#include "cmd_fit.hpp"
#include "cmd_launch.hpp"
#include "cmd_models.hpp"
#include "cmd_predict.hpp"
#include "cmd_profile.hpp"
#include "cmd_tune.hpp"
#include "cmd_validate.hpp"

namespace {

// Every subcommand's options, each subcommand registered with the app in the order --help lists them. The app
// keeps pointers to the members: built in place, never moved.
struct subcommands {
    mmgp::cli::predict_options predict;
    mmgp::cli::validate_options validate;
    mmgp::cli::fit_options_cli fit;
    mmgp::cli::calibrate_options calibrate;
#ifdef MMGP_HAVE_KERNELS
    mmgp::cli::profile_options profile;
#endif
    mmgp::cli::launch_options launch;
    mmgp::cli::tune_options_cli tune;
    mmgp::cli::models_options models;

    explicit subcommands(CLI::App& app) {
        mmgp::cli::setup_predict(app, predict);
        mmgp::cli::setup_validate(app, validate);
        mmgp::cli::setup_fit(app, fit);
        mmgp::cli::setup_calibrate(app, calibrate);
#ifdef MMGP_HAVE_KERNELS
        mmgp::cli::setup_profile(app, profile);
#endif
        mmgp::cli::setup_launch(app, launch);
        mmgp::cli::setup_tune(app, tune);
        mmgp::cli::setup_models(app, models);
    }
    subcommands(const subcommands&) = delete;
    subcommands& operator=(const subcommands&) = delete;
};

// Every argument is text: a byte that is not UTF-8 (in a --set value, a --name, a file name, a tuned program's
// words) is refused here, once, rather than failing later inside a JSON document.
bool all_utf8(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg(argv[i]);
        const std::size_t at = mmgp::invalid_utf8_at(arg);
        if (at < arg.size()) {
            char byte[8];
            std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(arg[at]));
            std::cerr << "mmgp: argument " << i << " (\"" << mmgp::cli::one_line(mmgp::utf8_prefix(arg.substr(0, at), 40))
                      << "...\"): expected UTF-8 text, found the byte " << byte << " at offset " << at << '\n';
            return false;
        }
    }
    return true;
}

// The subcommands' names, in the order --help lists them.
std::vector<std::string> subcommand_names(CLI::App& app) {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
    return names;
}

// The first word is a subcommand, --help or --version; anything else is named (CLI11 would only say that a
// subcommand is required).
bool known_first_word(CLI::App& app, int argc, char** argv) {
    if (argc <= 1) return true;
    const std::vector<std::string> names = subcommand_names(app);
    std::string listed;  // for messages
    for (const auto& name : names) listed += (listed.empty() ? "" : ", ") + name;
    const std::string_view first(argv[1]);
    if (argv[1][0] == '-') {
        if (first == "-h" || first == "--help" || first == "--version") return true;
        std::cerr << "mmgp: unknown option \"" << mmgp::cli::one_line(first) << "\": expected a subcommand first (" << listed
                  << "; see mmgp --help)\n";
        return false;
    }
    for (const auto& name : names)
        if (name == first) return true;
    std::cerr << "mmgp: unknown subcommand \"" << mmgp::cli::one_line(first) << "\": expected one of " << listed
              << " (see mmgp --help)\n";
    return false;
}

// CLI11's words for an option given twice ("--objective: At Most 1 required but received 2") in the project's
// form: the option, what was expected, what was found.
std::string parse_error_text(const std::string& what) {
    const std::string marker = ": At Most 1 required but received ";
    const std::size_t at = what.find(marker);
    if (at == std::string::npos) return what;
    return what.substr(0, at) + ": expected the option once (one value), found it given " +
           what.substr(at + marker.size()) + " times";
}

// Parses the command line: nothing when a subcommand is to run, else the exit status (help, version, or 2
// after naming what is wrong).
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "mmgp: " << mmgp::cli::one_line(parse_error_text(e.what())) << " (see mmgp --help)\n";
        return 2;
    }
    return std::nullopt;
}

// The subcommand the command line named.
int dispatch(CLI::App& app, subcommands& cmd) {
    if (app.got_subcommand("predict")) return mmgp::cli::run_predict(cmd.predict);
    if (app.got_subcommand("models")) return mmgp::cli::run_models(cmd.models);
    if (app.got_subcommand("validate")) return mmgp::cli::run_validate(cmd.validate);
    if (app.got_subcommand("fit")) return mmgp::cli::run_fit(cmd.fit);
    if (app.got_subcommand("calibrate")) return mmgp::cli::run_calibrate(cmd.calibrate);
#ifdef MMGP_HAVE_KERNELS
    if (app.got_subcommand("profile")) return mmgp::cli::run_profile(cmd.profile);
#endif
    if (app.got_subcommand("launch")) return mmgp::cli::run_launch(cmd.launch);
    if (app.got_subcommand("tune")) {
        for (const CLI::Option* opt : app.get_subcommand("tune")->get_options())
            if (opt->count() > 0) cmd.tune.given.push_back(opt->get_name());
        return mmgp::cli::run_tune(cmd.tune);
    }
    return 2;
}

// Runs the subcommand the command line named; its errors are printed here, alone: a refused command's warnings
// about its platform are dropped (one line for bad input), a command that ran prints them.
int run_subcommand(CLI::App& app, subcommands& cmd) {
    try {
        const int status = dispatch(app, cmd);
        mmgp::cli::flush_warnings();
        return status;
    } catch (const std::exception& e) {
        const int status = mmgp::run::exit_status_of(e);
        if (status == 2)  // bad input: one line, the platform's warnings dropped
            mmgp::cli::drop_warnings();
        else
            mmgp::cli::flush_warnings();
        std::cerr << (status == 2 ? "mmgp: " : "mmgp: internal error: ") << mmgp::cli::one_line(e.what())
                  << (mmgp::cli::report_incomplete() ? " (standard output holds an incomplete report)" : "") << '\n';
        return status;
    }
}

// Output that could not be written is an error: standard output is flushed and checked before the exit status
// is decided (a full disk, a closed stream, a pipe whose reader is gone), and a lost report exits 1, one line.
int checked_output(int status) {
    errno = 0;
    std::cout.flush();
    const bool stream_bad = !std::cout.good();
    const bool flush_failed = std::fflush(stdout) != 0;  // flushed whatever the stream said
    const bool lost = stream_bad || flush_failed || std::ferror(stdout) != 0;
    if (!lost) return status;
    // The write that failed set errno long ago; a stream known to be broken refuses one more byte the same way
    // (ENOSPC on a full disk or /dev/full, EBADF when closed).
    int err = errno;
    if (err == 0 && ::write(STDOUT_FILENO, "\n", 1) < 0) err = errno;
    if (err == 0) err = EIO;
    std::cerr << "mmgp: standard output: " << std::strerror(err) << " (the output is incomplete)\n";
    return status == 0 ? 1 : status;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"mmgp: the Model of Multi-Grain Parallelism. Predicts the run time of every mapping "
                 "(m processes per node, p accelerators per process, nodes) and picks the best."};
    app.require_subcommand(1);
    app.set_version_flag("--version", "mmgp 0.1.0");
    subcommands cmd(app);
    if (!all_utf8(argc, argv) || !known_first_word(app, argc, argv)) return 2;
    // --help and --version print on standard output: a lost one exits 1 like any other lost output.
    if (const std::optional<int> status = parse_command_line(app, argc, argv)) return *status == 0 ? checked_output(0) : *status;
    return checked_output(run_subcommand(app, cmd));
}
