// The small pieces every file of mmgp tune uses: a configuration's key (the journal's trace, the replayed runs'
// index) and its text for people, and the time of day the journal records. Calls nothing of the tune's own.
#pragma once

#include <string>

#include <fmt/format.h>

#include "common.hpp"
#include "mmgp/profile.hpp"  // utc_now(), the time of day the journal records

namespace mmgp::cli {

/// "m/p/nodes/policy": one configuration, as the journal's trace and the replayed runs name it.
inline std::string key_of(const configuration& c) {
    return fmt::format("{}/{}/{}/{}", c.m, c.p, c.nodes, to_string(c.pol));
}

/// "m=4 p=4 nodes=1 edtlp": one configuration for people.
inline std::string config_text(const configuration& c) { return label(c) + " " + std::string(to_string(c.pol)); }

}  // namespace mmgp::cli
