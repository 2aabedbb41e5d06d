#include "tuner/validate.hpp"
