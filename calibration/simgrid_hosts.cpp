// mmgp-simgrid-hosts: the hosts of a SimGrid platform file, one line each ("NAME CORES SPEED_FLOPS"), after a
// first line "simgrid MAJOR.MINOR.PATCH". mmgp calibrate --simulate runs it to learn the cluster before placing ranks with smpirun, and to
// refuse a file SimGrid cannot read with SimGrid's own message (one line "error: ...", exit status 2).
// Usage: mmgp-simgrid-hosts PLATFORM.xml
#include <simgrid/s4u.hpp>
#include <simgrid/version.h>

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: mmgp-simgrid-hosts PLATFORM.xml\n");
        return 2;
    }
    try {
        int sg_argc = 2;
        char quiet[] = "--log=root.thres:critical";
        char* sg_argv[] = {argv[0], quiet, nullptr};
        simgrid::s4u::Engine engine(&sg_argc, sg_argv);
        engine.load_platform(argv[1]);
        int major = 0, minor = 0, patch = 0;
        sg_version_get(&major, &minor, &patch);
        std::printf("simgrid %d.%d.%d\n", major, minor, patch);
        for (const auto* h : engine.get_all_hosts())
            std::printf("%s %d %.17g\n", h->get_cname(), h->get_core_count(), h->get_speed());
    } catch (const std::exception& e) {
        std::printf("error: %s\n", e.what());
        return 2;
    }
    return 0;
}
