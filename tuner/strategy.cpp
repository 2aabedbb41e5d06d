#include "tuner/strategy.hpp"
