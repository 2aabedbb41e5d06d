#include "tuner/tune.hpp"
