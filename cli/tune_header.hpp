// mmgp tune's options in its journal's header (tune_header.cpp): what a new journal's header holds, and the
// options a resumed tune reads back from it, through the header's schema (run/tune_journal.hpp). Called by
// cmd_tune.cpp.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tune_options.hpp"

namespace mmgp::cli {

/// The header of a new journal: the tune's options, and the directory it runs in.
nlohmann::json journal_header(const tune_options_cli& o);

/// The options a journal's header recorded, each checked as on the command line, the tune's directory entered;
/// the output options (--json, --quiet, --plot) stay the caller's.
tune_options_cli options_from_header(const nlohmann::json& header, const tune_options_cli& caller,
                                     const std::string& path);

/// The header key whose option a usage error's message names first ("--max-cost: ..." is max_cost), or "": a
/// resumed tune's bad option is its journal header's.
std::string header_key_named_by(std::string_view message);

}  // namespace mmgp::cli
