// The system libcurl, found through pkg-config (Debian: libcurl4-openssl-dev).
#include <curl/curl.h>
