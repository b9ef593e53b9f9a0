// The model lives in shared: the demo's simulated OPC UA server and MQTT publisher (ingest-worker) continue its traces live.
export * from '@bioprocess/shared/fed-batch-simulator';
