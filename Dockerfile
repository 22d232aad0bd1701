# Taxel server image: multi-stage on Debian bookworm. The build stage compiles taxel-server and
# taxel-cli with Debian's -dev packages; the runtime stage gets only the Debian packages that hold
# the shared libraries the two binaries link (found with ldd and dpkg -S, so the list cannot go
# stale), runs as an unprivileged user and needs no shell.
#   docker build -t taxel .            (podman: scripts/image.sh build)
#   docker run --rm -p 50051:50051 -p 9464:9464 taxel
#   docker run --rm taxel --help       (every flag)
FROM debian:bookworm AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      g++ make cmake pkg-config ccache \
      libeigen3-dev libabsl-dev libnanoflann-dev \
      libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler \
      golang-github-gogo-googleapis-dev prometheus-cpp-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Only what the two binaries are built from: a change to docs, tests or deploy/ keeps this layer
# and the next one cached. (The top-level CMakeLists.txt skips the client and example directories
# that are not here.)
COPY CMakeLists.txt VERSION ./
COPY cmake cmake
COPY proto proto
COPY core core
COPY server server
COPY client/cpp client/cpp
# ccache (picked up by CMakeLists.txt) keeps its cache in a build cache mount: a rebuild after a
# source change compiles only what changed (docker BuildKit and podman/buildah both support it).
RUN --mount=type=cache,target=/root/.ccache \
    cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DTAXEL_BUILD_TESTS=OFF -DTAXEL_BUILD_BENCH=OFF \
      -DTAXEL_BUILD_EXAMPLES=OFF \
    && cmake --build /build -j"$(nproc)" --target taxel-server taxel-cli \
    && mkdir /out && cp /build/server/taxel-server /build/client/cpp/taxel-cli /out/ && strip /out/*
# The packages that own the linked libraries (bookworm registers some under /lib, some under /usr/lib).
RUN for lib in $(ldd /out/* | awk '/=> \//{print $3}' | sort -u); do \
      real="$(readlink -f "$lib")"; \
      dpkg -S "$lib" 2>/dev/null || dpkg -S "$real" 2>/dev/null || dpkg -S "${real#/usr}" 2>/dev/null \
        || { echo "no package owns $lib" >&2; exit 1; }; \
    done | cut -d: -f1 | sort -u > /out/runtime-packages && cat /out/runtime-packages

FROM debian:bookworm-slim AS runtime
COPY --from=build /out/runtime-packages /tmp/runtime-packages
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      $(cat /tmp/runtime-packages) \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log /tmp/runtime-packages \
    && useradd --uid 10001 --user-group --home-dir /nonexistent --no-create-home \
         --shell /usr/sbin/nologin taxel
COPY --from=build /out/taxel-server /out/taxel-cli /usr/local/bin/
LABEL org.opencontainers.image.title="taxel" \
      org.opencontainers.image.description="Tactile-sensor readings and contact forces as a gRPC service"
USER 10001:10001
EXPOSE 50051 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/taxel-cli", "--target=127.0.0.1:50051", "--timeout=2", "info"]
ENTRYPOINT ["/usr/local/bin/taxel-server"]
CMD ["--address=0.0.0.0:50051", "--metrics_address=0.0.0.0:9464"]
