# tessera in an empty image: one static binary and nothing else.
#
# Build the binary first (no image is pulled, so no toolchain image either):
#   CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o tessera .
#   docker build -t tessera .
# Run the embedded server with its data in a volume:
#   docker run -p 9000:9000 -p 9001:9001 -v tessera-data:/data tessera server /data
FROM scratch
COPY tessera /tessera
VOLUME ["/data"]
EXPOSE 9000 9001
ENTRYPOINT ["/tessera"]
CMD ["server", "/data"]
