#include "manager/load_pool.h"
