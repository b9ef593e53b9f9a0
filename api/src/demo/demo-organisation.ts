/**
 * What the demo organisation holds: a process-development lab with two facilities, bioreactors,
 * centrifuges and chromatography skids with their instruments, and runs in every state. Times are
 * relative to the seeding moment so the lab always has completed, active and pending runs.
 */
import type { InstrumentType, Unit, UnitOperationType, FacilityType, Role } from '@bioprocess/shared/enums';

export const DEMO_ORGANISATION_NAME = 'Demo Bioprocess Lab';

export const DEMO_USERS: Array<{ key: 'admin' | 'editor' | 'viewer'; name: string; role: Role }> = [
  { key: 'admin', name: 'Sanne de Vries', role: 'admin' },
  { key: 'editor', name: 'Lucas Jansen', role: 'editor' },
  { key: 'viewer', name: 'Emma Bakker', role: 'viewer' },
];

export interface DemoInstrument { key: string; name: string; type: InstrumentType; unit: Unit }
export interface DemoEquipment { key: string; name: string; type: string; oem: string; facility: string; instruments: DemoInstrument[] }

export const DEMO_FACILITIES: Array<{ key: string; name: string; type: FacilityType; country: string; address: string }> = [
  { key: 'lab', name: 'Process Development Lab', type: 'lab', country: 'Netherlands', address: 'Molengraaffsingel 10, Delft' },
  { key: 'pilot', name: 'Pilot Plant Rotterdam', type: 'pilot plant', country: 'Netherlands', address: 'Waalhaven 45, Rotterdam' },
];

const bioreactorInstruments = (tag: string): DemoInstrument[] => [
  { key: 'temperature', name: `${tag} TIC-101 Temperature`, type: 'temperature', unit: 'celsius' },
  { key: 'ph', name: `${tag} AIC-102 pH`, type: 'pH', unit: 'pH' },
  { key: 'dissolvedO2', name: `${tag} AIC-103 Dissolved O2`, type: 'dissolved_o2', unit: '%' },
  { key: 'stirRate', name: `${tag} SIC-104 Stirrer`, type: 'stir_rate', unit: 'rpm' },
  { key: 'feedRate', name: `${tag} FIC-105 Glucose feed`, type: 'feed_rate', unit: 'mL/min' },
  { key: 'opticalDensity', name: `${tag} AI-106 OD600`, type: 'optical_density', unit: 'OD600' },
  { key: 'exhaustCo2', name: `${tag} AI-107 Off-gas CO2`, type: 'exhaust_co2', unit: '%' },
  { key: 'exhaustO2', name: `${tag} AI-108 Off-gas O2`, type: 'exhaust_o2', unit: '%' },
  { key: 'airFlow', name: `${tag} FIC-109 Air flow`, type: 'gas_flow_rate', unit: 'L/min' },
  { key: 'titer', name: `${tag} Offline titer (HPLC)`, type: 'titer', unit: 'g/L' },
];

export const DEMO_EQUIPMENT: DemoEquipment[] = [
  { key: 'br1', name: 'BR-01 Biostat B 5 L', type: 'Bioreactor', oem: 'Sartorius', facility: 'lab', instruments: bioreactorInstruments('BR-01') },
  { key: 'br2', name: 'BR-02 BioFlo 320', type: 'Bioreactor', oem: 'Eppendorf', facility: 'lab', instruments: bioreactorInstruments('BR-02') },
  { key: 'br3', name: 'BR-P1 Pilot fermenter 150 L', type: 'Fermenter', oem: 'Bioengineering', facility: 'pilot', instruments: bioreactorInstruments('BR-P1') },
  {
    key: 'cf1', name: 'CF-01 Sorvall LYNX 6000', type: 'Centrifuge', oem: 'Thermo Fisher', facility: 'lab',
    instruments: [
      { key: 'speed', name: 'CF-01 Rotor speed', type: 'rotational_speed', unit: 'rpm' },
      { key: 'gforce', name: 'CF-01 RCF', type: 'g_force', unit: 'G' },
      { key: 'temperature', name: 'CF-01 Chamber temperature', type: 'temperature', unit: 'celsius' },
    ],
  },
  {
    key: 'cf2', name: 'CF-P1 Disc stack separator', type: 'Centrifuge', oem: 'Alfa Laval', facility: 'pilot',
    instruments: [
      { key: 'speed', name: 'CF-P1 Bowl speed', type: 'rotational_speed', unit: 'rpm' },
      { key: 'flow', name: 'CF-P1 Feed flow', type: 'flow_rate', unit: 'L/h' },
    ],
  },
  {
    key: 'ch1', name: 'CH-01 ÄKTA pure 25', type: 'Chromatography skid', oem: 'Cytiva', facility: 'lab',
    instruments: [
      { key: 'uv280', name: 'CH-01 UV 280 nm', type: 'uv_absorbance_280', unit: 'mAU' },
      { key: 'conductivity', name: 'CH-01 Conductivity', type: 'conductivity', unit: 'mS/cm' },
      { key: 'pressure', name: 'CH-01 Column pressure', type: 'column_pressure', unit: 'bar' },
      { key: 'yield', name: 'CH-01 Step yield', type: 'yield', unit: '%' },
    ],
  },
  {
    key: 'pio', name: 'PIO-01 Pioreactor 20 mL', type: 'Bioreactor', oem: 'Pioreactor', facility: 'lab',
    instruments: [{ key: 'od', name: 'PIO-01 OD reading', type: 'optical_density', unit: 'AU' }],
  },
  {
    key: 'chibio', name: 'CB-M0 Chi.Bio reactor', type: 'Bioreactor', oem: 'Chi.Bio', facility: 'lab',
    instruments: [
      { key: 'od', name: 'CB-M0 OD measured', type: 'optical_density', unit: 'OD600' },
      { key: 'mediaTemp', name: 'CB-M0 Media temperature', type: 'temperature', unit: 'celsius' },
    ],
  },
  {
    key: 'dasware', name: 'BR-03 BioFlo 320 (DASware)', type: 'Bioreactor', oem: 'Eppendorf', facility: 'pilot',
    instruments: [
      { key: 'do', name: 'BR-03 DO1.PV', type: 'dissolved_o2', unit: '%' },
      { key: 'ph', name: 'BR-03 pH1.PV', type: 'pH', unit: 'pH' },
      { key: 'temperature', name: 'BR-03 T1.PV', type: 'temperature', unit: 'celsius' },
      { key: 'stir', name: 'BR-03 N1.PV', type: 'stir_rate', unit: 'rpm' },
    ],
  },
];

const HOUR = 3_600_000;

export interface DemoUnitOperation {
  type: UnitOperationType;
  equipment: string;
  /** Offsets from the run start, in hours; null end means still running. */
  startHour: number;
  endHour: number | null;
  simulate?: 'fed-batch' | 'centrifugation' | 'chromatography';
  /** A feed valve that stays open from this hour (fed-batch only), so the run drifts from the good ones. */
  feedFault?: { fromHour: number; leakMlPerMin: number };
  comments?: Array<{ hour: number; content: string; author: 'admin' | 'editor' }>;
}

export interface DemoRun {
  name: string;
  strain: string;
  target: string;
  description: string;
  facility: string;
  scaleLiters: number;
  scaleGrams: number | null;
  /** Start relative to the seeding moment, in hours (negative: in the past). Absolute when startMs is set. */
  startOffsetHours?: number;
  startMs?: number;
  durationHours: number | null;
  unitOperations: DemoUnitOperation[];
  dataset?: { file: string; equipment: string; timestampColumn: string; elapsedUnit?: 'seconds'; columns: Record<string, string> };
}

const fermentationComments: DemoUnitOperation['comments'] = [
  { hour: 0.2, content: 'Inoculated from shake flask, OD600 0.3', author: 'editor' },
  { hour: 8.5, content: 'Batch glucose depleted, exponential feed started', author: 'editor' },
  { hour: 14, content: 'Induced with 0.5 mM IPTG, temperature shift to 30 °C', author: 'admin' },
  { hour: 22, content: 'Foam event, 2 mL antifoam added', author: 'editor' },
];

const feedFaultComments: DemoUnitOperation['comments'] = [
  ...fermentationComments!.slice(0, 1),
  { hour: 3.5, content: 'Feed line wet before feed start, valve FV-105 checked, no fault found', author: 'editor' },
  ...fermentationComments!.slice(1),
];

function processTrain(fermentationHours: number, running = false, feedFault?: DemoUnitOperation['feedFault']): DemoUnitOperation[] {
  const train: DemoUnitOperation[] = [
    {
      type: 'fermentation', equipment: 'br1', startHour: 0, endHour: running ? null : fermentationHours, simulate: 'fed-batch',
      comments: feedFault ? feedFaultComments : fermentationComments, ...(feedFault ? { feedFault } : {}),
    },
  ];
  if (running) return train;
  return [
    ...train,
    { type: 'centrifugation', equipment: 'cf1', startHour: fermentationHours + 1, endHour: fermentationHours + 2, simulate: 'centrifugation',
      comments: [{ hour: fermentationHours + 1.5, content: 'Pellet firm, supernatant clear', author: 'editor' }] },
    { type: 'chromatography', equipment: 'ch1', startHour: fermentationHours + 4, endHour: fermentationHours + 7, simulate: 'chromatography',
      comments: [{ hour: fermentationHours + 5.2, content: 'Main peak eluted at 38 mS/cm', author: 'admin' }] },
  ];
}

export function demoRuns(): DemoRun[] {
  const day = 24;
  return [
    { name: 'FB-2026-031 GFP fed-batch', strain: 'E. coli BL21(DE3) pET-GFP', target: 'GFP', description: 'Baseline fed-batch at 5 L scale, exponential feed µ = 0.16 1/h.', facility: 'lab', scaleLiters: 5, scaleGrams: 14.8, startOffsetHours: -30 * day, durationHours: 48, unitOperations: processTrain(40) },
    { name: 'FB-2026-034 GFP high feed', strain: 'E. coli BL21(DE3) pET-GFP', target: 'GFP', description: 'Feed ceiling raised 20 % to test oxygen limitation.', facility: 'lab', scaleLiters: 5, scaleGrams: 16.2, startOffsetHours: -23 * day, durationHours: 48, unitOperations: processTrain(40) },
    { name: 'FB-2026-037 Lipase induction 25 °C', strain: 'E. coli BL21(DE3) pET-LipA', target: 'Lipase A', description: 'Lower induction temperature for soluble expression.', facility: 'lab', scaleLiters: 5, scaleGrams: 9.6, startOffsetHours: -16 * day, durationHours: 48, unitOperations: processTrain(38) },
    { name: 'FB-2026-040 Lipase scale-down', strain: 'E. coli BL21(DE3) pET-LipA', target: 'Lipase A', description: 'Scale-down model of the pilot process.', facility: 'lab', scaleLiters: 2, scaleGrams: 4.1, startOffsetHours: -9 * day, durationHours: 48, unitOperations: processTrain(36) },
    { name: 'FB-2026-041 GFP feed valve fault', strain: 'E. coli BL21(DE3) pET-GFP', target: 'GFP', description: 'Feed valve FV-105 did not close fully: glucose leaked in from 3 h, growth and oxygen demand ran ahead of the good runs.', facility: 'lab', scaleLiters: 5, scaleGrams: 17.4, startOffsetHours: -7 * day, durationHours: 48, unitOperations: processTrain(40, false, { fromHour: 3, leakMlPerMin: 0.1 }) },
    { name: 'FB-2026-043 GFP reproducibility', strain: 'E. coli BL21(DE3) pET-GFP', target: 'GFP', description: 'Repeat of FB-2026-031 for reproducibility.', facility: 'lab', scaleLiters: 5, scaleGrams: 15.1, startOffsetHours: -4 * day, durationHours: 48, unitOperations: processTrain(40) },
    { name: 'FB-2026-045 GFP running', strain: 'E. coli BL21(DE3) pET-GFP', target: 'GFP', description: 'Ongoing fed-batch, induction planned at 14 h.', facility: 'lab', scaleLiters: 5, scaleGrams: null, startOffsetHours: -20, durationHours: null, unitOperations: processTrain(0, true) },
    { name: 'PP-2026-002 Pilot lipase 150 L', strain: 'E. coli BL21(DE3) pET-LipA', target: 'Lipase A', description: 'First pilot-scale run, planned.', facility: 'pilot', scaleLiters: 150, scaleGrams: null, startOffsetHours: 5 * day, durationHours: 60, unitOperations: [{ type: 'fermentation', equipment: 'br3', startHour: 0, endHour: 48 }, { type: 'centrifugation', equipment: 'cf2', startHour: 50, endHour: 54 }] },
    { name: 'FB-2026-048 Media screen', strain: 'E. coli W3110', target: 'Biomass', description: 'Defined medium screen, not started yet.', facility: 'lab', scaleLiters: 2, scaleGrams: null, startOffsetHours: 2 * day, durationHours: 30, unitOperations: [{ type: 'fermentation', equipment: 'br2', startHour: 0, endHour: 30 }] },
    {
      name: 'PIO-2025-02 Pioreactor OD trace', strain: 'E. coli MG1655', target: 'Growth curve', description: 'Pioreactor optical density readings (public dataset, Pioreactor/pioreactor).', facility: 'lab', scaleLiters: 0.02, scaleGrams: null,
      startMs: Date.parse('2025-02-26T10:20:00Z'), durationHours: 15.5,
      unitOperations: [{ type: 'fermentation', equipment: 'pio', startHour: 0, endHour: 15.5 }],
      dataset: { file: 'od_readings_with_too_frequently_outlier_detections.csv', equipment: 'pio', timestampColumn: 'timestamp', columns: { od_reading: 'od' } },
    },
    {
      name: 'CB-2021-05 Chi.Bio chemostat M0', strain: 'Agrobacterium tumefaciens', target: 'Chemostat', description: 'Chi.Bio reactor log, elapsed seconds since start (public dataset, nahanoo/ChiBioFlow).', facility: 'lab', scaleLiters: 0.02, scaleGrams: null,
      startMs: Date.parse('2021-05-02T07:12:51Z'), durationHours: 260,
      unitOperations: [{ type: 'fermentation', equipment: 'chibio', startHour: 0, endHour: 260 }],
      dataset: { file: '2021-05-02 07_12_51_M0_data.csv', equipment: 'chibio', timestampColumn: 'exp_time', elapsedUnit: 'seconds', columns: { od_measured: 'od', media_temp: 'mediaTemp' } },
    },
    {
      name: 'MB-2020-07 M. buryatense batch', strain: 'Methylotuvimicrobium buryatense 5GB1', target: 'Biomass', description: 'Eppendorf DASware export of a BioFlo 320 methanotroph batch (public dataset, KobeDeBecker/Mburyatense_data).', facility: 'pilot', scaleLiters: 1.5, scaleGrams: null,
      startMs: Date.parse('2020-07-14T07:50:00Z'), durationHours: 56,
      unitOperations: [{ type: 'fermentation', equipment: 'dasware', startHour: 0, endHour: 56 }],
      dataset: { file: 'CTPC06603.20200714 - 5GB1 - KDB.Control.csv', equipment: 'dasware', timestampColumn: 'Timestamp', columns: { 'Unit 1.DO1.PV [%DO]': 'do', 'Unit 1.pH1.PV [pH]': 'ph', 'Unit 1.T1.PV [°C]': 'temperature', 'Unit 1.N1.PV [rpm]': 'stir' } },
    },
  ];
}

export const DEMO_HOUR_MS = HOUR;

/** The saved golden batch of the demo: the completed fed-batch fermentations without a fault. */
export const DEMO_GOLDEN_BATCH = {
  name: 'Fed-batch golden batch',
  parameters: ['temperature', 'pH', 'dissolved_o2', 'stir_rate', 'feed_rate', 'optical_density', 'exhaust_co2'] as InstrumentType[],
  alignment: { kind: 'start' as const },
  // Three standard deviations: with five references a narrower band flags ordinary probe noise.
  band: { kind: 'sigma' as const, k: 3 },
};

export function isGoldenBatchReference(spec: DemoUnitOperation): boolean {
  return spec.simulate === 'fed-batch' && spec.endHour !== null && !spec.feedFault;
}
