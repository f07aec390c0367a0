// mmgp-simgrid-hosts: the hosts of a SimGrid platform file, one line each ("NAME CORES SPEED_FLOPS"), after a
// first line "simgrid MAJOR.MINOR.PATCH" and one line "config KEY VALUE" per SMPI setting the file's <config> changes
// (collective algorithms, latency and bandwidth factors, software overheads). mmgp calibrate --simulate runs it to
// learn the cluster before placing ranks with smpirun, to write those settings into the profile's notes, and to
// refuse a file SimGrid cannot read with SimGrid's own message (first line "error: ...", exit status 2), and one
// SMPI could not simulate: a link without a positive bandwidth or with a negative latency (hosts without a route
// between them are found by smpirun itself; calibration/simulate.cpp reports its message as the file's).
// Usage: mmgp-simgrid-hosts PLATFORM.xml
#include <simgrid/s4u.hpp>
#include <simgrid/version.h>
#include <xbt/config.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <string>

// SMPI's configuration keys (smpi/allreduce, smpi/lat-factor, ...), declared as smpirun declares them, so that a
// platform file's <config> may set them (public in smpi/smpi.h, which this plain SimGrid program does not include).
extern "C" void smpi_init_options();

namespace {

// What SMPI would stop on, as one "error: ..." line (empty: none): a link's bandwidth or latency.
std::string unsimulable(const simgrid::s4u::Engine& engine) {
    for (const auto* l : engine.get_all_links()) {
        if (!(l->get_bandwidth() > 0) || !std::isfinite(l->get_bandwidth()))
            return "link " + std::string(l->get_cname()) + " has a bandwidth of " + std::to_string(l->get_bandwidth()) +
                   " B/s; SMPI needs one above 0";
        if (!(l->get_latency() >= 0))
            return "link " + std::string(l->get_cname()) + " has a latency of " + std::to_string(l->get_latency()) +
                   " s; SMPI needs one of at least 0";
    }
    return "";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: mmgp-simgrid-hosts PLATFORM.xml\n");
        return 2;
    }
    try {
        int sg_argc = 2;
        char quiet[] = "--log=root.thres:critical";
        char* sg_argv[] = {argv[0], quiet, nullptr};
        smpi_init_options();
        simgrid::s4u::Engine engine(&sg_argc, sg_argv);
        engine.load_platform(argv[1]);
        if (const std::string why = unsimulable(engine); !why.empty()) {
            std::printf("error: %s\n", why.c_str());
            return 2;
        }
        int major = 0, minor = 0, patch = 0;
        sg_version_get(&major, &minor, &patch);
        std::printf("simgrid %d.%d.%d\n", major, minor, patch);
        for (const char* key : {"smpi/coll-selector", "smpi/allreduce", "smpi/reduce", "smpi/bcast", "smpi/barrier",
                                "smpi/lat-factor", "smpi/bw-factor", "smpi/os", "smpi/or", "smpi/ois"})
            if (!simgrid::config::is_default(key))
                std::printf("config %s %s\n", key, simgrid::config::get_value<std::string>(key).c_str());
        for (const auto* h : engine.get_all_hosts())
            std::printf("%s %d %.17g\n", h->get_cname(), h->get_core_count(), h->get_speed());
    } catch (const std::exception& e) {
        std::printf("error: %s\n", e.what());
        return 2;
    }
    return 0;
}
