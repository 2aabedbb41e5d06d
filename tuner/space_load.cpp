#include "tuner/space.hpp"
