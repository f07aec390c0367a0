// The C++ API from outside the project: search the best mapping of a scenario and render its launch.
// Built against the installed library: c++ -std=c++20 predict_launch.cpp $(pkg-config --cflags --libs mmgp)
#include <iostream>
#include <mmgp/launch.hpp>
#include <mmgp/search.hpp>

int main(int argc, char** argv) {
    try {
        mmgp::scenario s = mmgp::load_scenario(argc > 1 ? argv[1] : "pbpi-qs20");
        mmgp::search_result r = mmgp::search(s, mmgp::model_kind::mmgp, {false});
        mmgp::launch_request rq;
        rq.kind = mmgp::launcher_kind::openmpi;
        rq.mapping = r.best.c;
        std::cout << "best m=" << r.best.c.m << " p=" << r.best.c.p << " nodes=" << r.best.c.nodes << " "
                  << r.best.pred.time_s << " s\n"
                  << mmgp::shell_command(mmgp::render_launch(rq, {"./app", "-t", "{p}"}));
    } catch (const mmgp::error& e) {
        std::cerr << "predict_launch: " << e.what() << '\n';
        return 2;
    }
    return 0;
}
