# Taxel server image: multi-stage on Debian bookworm.
#   docker build -t taxel .
#   docker run --rm -p 50051:50051 -p 9464:9464 taxel
FROM debian:bookworm AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake pkg-config \
      libeigen3-dev libabsl-dev libnanoflann-dev \
      libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler \
      golang-github-gogo-googleapis-dev prometheus-cpp-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DTAXEL_BUILD_TESTS=OFF -DTAXEL_BUILD_BENCH=OFF \
      -DTAXEL_BUILD_EXAMPLES=OFF \
    && cmake --build /build -j"$(nproc)" --target taxel-server taxel-cli \
    && strip /build/server/taxel-server /build/client/cpp/taxel-cli

FROM debian:bookworm-slim AS runtime
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 \
      libprometheus-cpp-pull1.0 libprometheus-cpp-core1.0 libcivetweb1 ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home /nonexistent --shell /usr/sbin/nologin taxel
COPY --from=build /build/server/taxel-server /build/client/cpp/taxel-cli /usr/local/bin/
USER 10001:10001
EXPOSE 50051 9464
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["/usr/local/bin/taxel-cli", "--target=127.0.0.1:50051", "--timeout=2", "info"]
ENTRYPOINT ["/usr/local/bin/taxel-server"]
CMD ["--address=0.0.0.0:50051", "--metrics_address=0.0.0.0:9464"]
