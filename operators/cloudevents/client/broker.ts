/**
 * A Connection to the MQTT broker, so that controllers wire a connection by its name, broker and
 * routes without importing the transport.
 */
import type { Logger } from "../../runtime/logger.ts";
import { mqttTransportFactory, type BrokerConnectionOptions } from "../transport/mqtt.ts";
import type { CloudEvent } from "../types.ts";
import { Connection } from "./connection.ts";

export type { BrokerConnectionOptions };

export interface BrokerConnectionRoutes {
  /** Topic filters subscribed after each (re)connect. */
  subscriptions: string[];
  /** The topic each outbound event goes to. */
  publishTopic(event: CloudEvent): string;
}

export function brokerConnection(
  name: string,
  broker: BrokerConnectionOptions,
  routes: BrokerConnectionRoutes,
  log?: Logger,
): Connection {
  return new Connection({
    name,
    log,
    backoff: broker.backoff,
    newTransport: mqttTransportFactory(broker, routes),
  });
}
