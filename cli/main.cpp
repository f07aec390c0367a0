// mmgp: predict the run time of every mapping of a program onto host cores and accelerators.
// Each subcommand lives in cmd_<name>.cpp; errors are printed here, in one place.
#include <cstdio>
#include <iostream>
#include <string>

#include "common.hpp"

int main(int argc, char** argv) {
    CLI::App app{"mmgp: the Model of Multi-Grain Parallelism. Predicts the run time of every mapping "
                 "(m processes per node, p accelerators per process, nodes) and picks the best."};
    app.require_subcommand(1);
    app.set_version_flag("--version", "mmgp 0.1.0");
    mmgp::cli::predict_options predict;
    mmgp::cli::validate_options validate;
    mmgp::cli::fit_options_cli fit;
    mmgp::cli::calibrate_options calibrate;
    mmgp::cli::setup_predict(app, predict);
    mmgp::cli::setup_validate(app, validate);
    mmgp::cli::setup_fit(app, fit);
    mmgp::cli::setup_calibrate(app, calibrate);
#ifdef MMGP_HAVE_KERNELS
    mmgp::cli::profile_options profile;
    mmgp::cli::setup_profile(app, profile);
#endif
    mmgp::cli::launch_options launch;
    mmgp::cli::setup_launch(app, launch);
    mmgp::cli::tune_options_cli tune;
    mmgp::cli::setup_tune(app, tune);
    // Every argument is text: a byte that is not UTF-8 (in a --set value, a --name, a file name, a tuned program's
    // words) is refused here, once, rather than failing later inside a JSON document.
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg(argv[i]);
        const std::size_t at = mmgp::invalid_utf8_at(arg);
        if (at < arg.size()) {
            char byte[8];
            std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(arg[at]));
            std::cerr << "mmgp: argument " << i << " (\"" << mmgp::utf8_prefix(arg.substr(0, at), 40)
                      << "...\"): expected UTF-8 text, found the byte " << byte << " at offset " << at << '\n';
            return 2;
        }
    }
    std::string names;  // the subcommands, for messages
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
        names += (names.empty() ? "" : ", ") + sub->get_name();
    // An option before any subcommand (other than --help and --version) is named.
    if (argc > 1 && argv[1][0] == '-') {
        const std::string_view first(argv[1]);
        if (first != "-h" && first != "--help" && first != "--version") {
            std::cerr << "mmgp: unknown option \"" << first << "\": expected a subcommand first (" << names
                      << "; see mmgp --help)\n";
            return 2;
        }
    }
    // A first word that is neither an option nor a subcommand is named (CLI11 would only say one is required).
    if (argc > 1 && argv[1][0] != '-') {
        bool known = false;
        for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
            known = known || sub->get_name() == argv[1];
        if (!known) {
            std::cerr << "mmgp: unknown subcommand \"" << argv[1] << "\": expected one of " << names
                      << " (see mmgp --help)\n";
            return 2;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "mmgp: " << e.what() << " (see mmgp --help)\n";
        return 2;
    }
    try {
        if (app.got_subcommand("predict")) return mmgp::cli::run_predict(predict);
        if (app.got_subcommand("validate")) return mmgp::cli::run_validate(validate);
        if (app.got_subcommand("fit")) return mmgp::cli::run_fit(fit);
        if (app.got_subcommand("calibrate")) return mmgp::cli::run_calibrate(calibrate);
#ifdef MMGP_HAVE_KERNELS
        if (app.got_subcommand("profile")) return mmgp::cli::run_profile(profile);
#endif
        if (app.got_subcommand("launch")) return mmgp::cli::run_launch(launch);
        if (app.got_subcommand("tune")) {
            for (const CLI::Option* opt : app.get_subcommand("tune")->get_options())
                if (opt->count() > 0) tune.given.push_back(opt->get_name());
            return mmgp::cli::run_tune(tune);
        }
    } catch (const mmgp::error& e) {
        std::cerr << "mmgp: " << e.what() << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "mmgp: internal error: " << e.what() << '\n';
        return 1;
    }
    return 2;
}
