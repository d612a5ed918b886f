// The declarations are in include/CFuzzDriver.h; SwiftPM wants one source file per C target.
#include "CFuzzDriver.h"
