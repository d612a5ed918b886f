# The courier CLI in a container: build with the full Swift image, run on the slim one plus
# libcurl. `docker build -t courier .` then `docker run --rm courier run /jobs/job.json`.
# The runtime image has no compiler, no headers and no shell tools beyond Debian's base.

# --- build stage: the Swift toolchain, the headers of libcurl and its brotli and zstd -------
FROM swift:6.3-bookworm AS build
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       libcurl4-openssl-dev libbrotli-dev libzstd-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Package.swift names the test targets too, so their folders come along (see .dockerignore).
COPY . .
# The standard library and Foundation linked in, as `make install` does: a faster start
# (docs/benchmarks.md, "Cold start").
RUN swift build -c release --product courier --static-swift-stdlib \
    && install -D -m 755 -s "$(swift build -c release --show-bin-path)/courier" /out/courier

# --- runtime stage: the Swift runtime libraries, libcurl and CA certificates ---------------
# (libcurl4 brings libbrotli1, libzstd1 and zlib1g, the decoders the curl transport links too)
FROM swift:6.3-bookworm-slim
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       libcurl4 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/courier /usr/local/bin/courier
# Not root: the CronJob's securityContext runs it as 65532 too.
USER 65532:65532
WORKDIR /data
ENTRYPOINT ["/usr/local/bin/courier"]
CMD ["--help"]
