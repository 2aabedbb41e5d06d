#include "tuner/journal.hpp"
