/** The suggestion lives in shared so the api's CSV preview and the wizard guess alike. */
export { suggestInstrument } from '@bioprocess/shared/instruments/suggestion';
