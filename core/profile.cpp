#include "core/profile.hpp"
