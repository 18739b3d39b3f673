// A project's own header: the HIP runtime comes in through it.
#pragma once
#include "detail/runtime.hpp"
