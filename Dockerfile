# merchant-sandbox: the standalone sandbox server.
#
#   docker build -t merchant-sandbox .
#   docker run --rm -p 4010:4010 merchant-sandbox
#   docker run --rm -p 4010:4010 merchant-sandbox serve --token-ttl 60s
#   docker run --rm -p 4010:4010 -e MERCHANT_SANDBOX_TOKEN_TTL=60s merchant-sandbox
#   docker run --rm -p 127.0.0.1:4010:4010 merchant-sandbox      # reachable from this machine only
#
# Every `serve` flag is also an environment variable MERCHANT_SANDBOX_<FLAG>.
# The control plane (/__sandbox/) answers to localhost, IP addresses and single-label names (a
# compose or CI service name such as `sandbox`); add dotted names with MERCHANT_SANDBOX_ALLOWED_HOSTS.

# ---- build: all dependencies, compile TypeScript to dist/ and bundle the CLI into dist/bin/ -----
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the package's `prepare` (the build) would run here, before the sources are
# copied; the build runs once, below. Dependencies' scripts are not needed either: msw's postinstall
# copies a service worker into a web app, and esbuild finds its binary through its optional
# platform package.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig*.json ./
COPY src ./src
COPY ui ./ui
COPY tools ./tools
RUN npm run build

# ---- runtime ------------------------------------------------------------------------------------
FROM node:22-bookworm-slim AS runtime

# Where the image came from is known at build time only; CI adds it, e.g.
#   --label org.opencontainers.image.source=<repo URL> --label org.opencontainers.image.revision=$(git rev-parse HEAD)
#   --label org.opencontainers.image.version=$(node -p 'require("./package.json").version')
LABEL org.opencontainers.image.title="merchant-sandbox" \
      org.opencontainers.image.description="A strict, explainable sandbox of a merchant payment API's authentication model: token exchange, JWT bearer auth, payment tokens, deprecated login." \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.base.name="docker.io/library/node:22-bookworm-slim"

# 0.0.0.0: inside a container, loopback is unreachable through -p. Without an admin token (set
# MERCHANT_SANDBOX_ADMIN_TOKEN, 16+ characters) serve warns once at start that anyone who can
# reach the published port can drive the control plane. `container` (the systemd convention,
# which podman follows) tells serve it runs in one: the warning then says to publish the port on
# 127.0.0.1 (-p 127.0.0.1:4010:4010), not to bind 127.0.0.1, which would break -p.
ENV NODE_ENV=production \
    container=docker \
    MERCHANT_SANDBOX_HOST=0.0.0.0 \
    MERCHANT_SANDBOX_PORT=4010

WORKDIR /app
# Owned by root and read-only to the `node` user that runs the server.
# The CLI is bundled with its dependencies (dist/bin/, see `npm run bundle`), so the runtime needs
# no node_modules: a smaller image, and one file read at start instead of hundreds.
COPY package.json ./
COPY --from=build /app/dist/bin ./dist/bin
# The QA page (/__sandbox/ui/): its script, style and HTML, built with no CDN so it works offline.
COPY --from=build /app/dist/ui ./dist/ui
# The scenario library (`serve --scenario NAME`) and its JSON Schema.
COPY scenarios ./scenarios

USER node
EXPOSE 4010

# HEALTHCHECK is part of the Docker image format only: buildah/podman build OCI by default and drop
# it with a warning; build with `--format docker` (or BUILDAH_FORMAT=docker) to keep it.
HEALTHCHECK --interval=30s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.MERCHANT_SANDBOX_PORT||4010)+'/__sandbox/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]

# Exec form: node is PID 1 and handles SIGTERM/SIGINT itself (graceful close, then exit 0).
ENTRYPOINT ["node", "--max-semi-space-size=2", "/app/dist/bin/main.js"]
CMD ["serve"]
