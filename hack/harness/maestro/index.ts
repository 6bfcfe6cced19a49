/**
 * The real Maestro (github.com/openshift-online/maestro, built by hack/build-maestro.sh) for the
 * interoperability tests: a `maestro server` on a fresh PostgreSQL database (server.ts,
 * postgres.ts) and `maestro agent`s (agent.ts), both talking MQTT 5 over TLS to the region's
 * mosquitto, every port on 127.0.0.1; the server's REST API (rest.ts) and its gRPC publish with a
 * hand-written protobuf encoder (grpc.ts).
 */
export { startMaestroAgent, type MaestroAgent, type StartMaestroAgentOptions } from "./agent.ts";
export {
  GRPC_SOURCE,
  MANIFEST_BUNDLE_TYPE,
  encodeCloudEvent,
  grpcPublish,
  type BundleSpec,
  type GrpcCloudEvent,
} from "./grpc.ts";
export type { PostgresConnection } from "./postgres.ts";
export { MAESTRO_SOURCE_ID, maestroBinary, type MaestroMqttConfig } from "./process.ts";
export type { MaestroConsumer, ResourceBundle } from "./rest.ts";
export { startMaestroServer, type MaestroServer, type StartMaestroServerOptions } from "./server.ts";
