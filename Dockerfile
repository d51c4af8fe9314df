# tessera in an empty image: one static binary, run as a non-root user.
#
# Build the binary first (no image is pulled, so no toolchain image either);
# the repository is the build context, of which .dockerignore sends only the
# binary and the empty data directory:
#   CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o tessera .
#   docker build -t tessera .
# Run the embedded server with its data in a volume:
#   docker run -p 9000:9000 -p 9001:9001 -v tessera-data:/data tessera server /data
FROM scratch
COPY tessera /tessera
# /data belongs to the user tessera runs as. A named volume mounted there
# starts as a copy of it, ownership included; a host directory mounted
# there must be made writable for 65532 (chown 65532:65532 DIR).
COPY --chown=65532:65532 deploy/docker/data /data
USER 65532:65532
VOLUME ["/data"]
EXPOSE 9000 9001
# Healthy while /health/ready on 127.0.0.1:9001 answers 200: a gateway or
# server that would take a write, a peer (given --web-address :9001) whose
# store has room and that is in gossip. A scratch image has no curl, so the
# binary checks itself.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["/tessera", "healthcheck"]
ENTRYPOINT ["/tessera"]
CMD ["server", "/data"]
