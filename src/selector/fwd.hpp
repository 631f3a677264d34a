#pragma once

// For headers that hold a compiled selector by pointer without parsing or evaluating one.
namespace carrier::selector {
class Selector;
}  // namespace carrier::selector
