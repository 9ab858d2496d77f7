# The manager's image: a static binary (CGO_ENABLED=0) on an empty base with the CA certificates
# of the build stage, run as the nonroot user 65532:65532, as the Deployment of config/manager
# expects. `make image` builds the same image without Docker (hack/image).
#
# GO_IMAGE is the Go toolchain image of the build stage; it names no registry, so your builder
# resolves it to its default registry or mirror. Build with:
#   docker build --build-arg GO_IMAGE=<go 1.26 image> -t <name>:<tag> .
ARG GO_IMAGE=golang:1.26

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY internal/ internal/
COPY pkg/ pkg/
ARG TARGETARCH
RUN CGO_ENABLED=0 GOOS=linux GOARCH=${TARGETARCH} go build -trimpath -ldflags="-s -w" -o /out/manager ./cmd/manager
RUN mkdir -p /out/etc \
	&& printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > /out/etc/passwd \
	&& printf 'root:x:0:\nnonroot:x:65532:\n' > /out/etc/group

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/etc/passwd /out/etc/group /etc/
COPY --from=build /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
