// mmgp/models.hpp — the models the engine evaluates, by name, each with the paper or measurement it follows.
//
//   for (const mmgp::model_info& m : mmgp::registered_models()) std::cout << m.name << ": " << m.source << "\n";
//
// Three roles: an application model predicts a mapping's time (eq11 and mmgp, chosen with --model; wavefront,
// chosen by the application's wavefront section); a communication model costs one collective; a term is a layer
// the mmgp model adds when the platform has it (docs/MODEL.md).
#pragma once

#include "mmgp/export.hpp"

#include <span>
#include <string_view>

MMGP_API_BEGIN
namespace mmgp {

enum class model_role { application, communication, term };
std::string_view to_string(model_role r) noexcept;

struct model_info {
    std::string_view name;     ///< as --model, docs/MODEL.md and a report name it
    model_role role;
    std::string_view chosen;   ///< how a run gets it, e.g. "--model eq11", "the platform's cores"
    std::string_view summary;  ///< what it computes, one line
    std::string_view source;   ///< the paper ([H], [C], [R], [RR] in docs/MODEL.md) or the measurement it follows
    std::string_view section;  ///< where docs/MODEL.md writes it out
};

/// Every model, application models first, in a fixed order.
std::span<const model_info> registered_models() noexcept;
/// The model of that name; nullptr when there is none.
const model_info* find_model(std::string_view name) noexcept;

}  // namespace mmgp
MMGP_API_END
