#include "backend/load_timings.h"
