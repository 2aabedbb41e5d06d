#include "tuner/dcqcn.hpp"
