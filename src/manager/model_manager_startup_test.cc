#include "manager/model_manager.h"
