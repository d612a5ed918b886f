#ifndef CCURL_H
#define CCURL_H

// Typed wrappers over libcurl's variadic calls, which Swift cannot call directly.
// Each wrapper passes exactly one argument of the type the option documents.

#include <curl/curl.h>
#include <stddef.h>

#include "CCurlDecode.h"

/// Signature of CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION callbacks.
typedef size_t (*ccurl_data_callback)(char *data, size_t size, size_t count, void *context);

/// Signature of CURLOPT_SEEKFUNCTION callbacks.
typedef int (*ccurl_seek_callback)(void *context, curl_off_t offset, int origin);

/// Signature of CURLOPT_XFERINFOFUNCTION callbacks.
typedef int (*ccurl_progress_callback)(void *context, curl_off_t download_total,
                                       curl_off_t download_now, curl_off_t upload_total,
                                       curl_off_t upload_now);

/// Signature of CURLOPT_PREREQFUNCTION callbacks: called each time the request is about to be
/// sent, on a new or a reused connection.
typedef int (*ccurl_prereq_callback)(void *context, char *primary_ip, char *local_ip,
                                     int primary_port, int local_port);

CURLcode ccurl_easy_setopt_progress_callback(CURL *handle, ccurl_progress_callback callback);
/// CURLOPT_PREREQFUNCTION (libcurl 7.80 and later; CURLE_UNKNOWN_OPTION before).
CURLcode ccurl_easy_setopt_prereq_callback(CURL *handle, ccurl_prereq_callback callback);
CURLcode ccurl_easy_setopt_seek_callback(CURL *handle, ccurl_seek_callback callback);
CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, const void *value);
CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode ccurl_easy_setopt_data_callback(CURL *handle, CURLoption option,
                                         ccurl_data_callback callback);

CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode ccurl_easy_getinfo_double(CURL *handle, CURLINFO info, double *value);
CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, const char **value);

CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/// Whether this libcurl was built with HTTP/2 support.
int ccurl_supports_http2(void);

/* The event loop running on this thread (NULL on other threads). */
void ccurl_set_current_loop(const void *loop);
const void *ccurl_current_loop(void);

/* Names the calling thread as tools (top, perf) show it; at most 15 bytes are kept. */
void ccurl_name_thread(const char *name);

#endif
