/**
 * Where each real instrument export that tests read lives in the repository, so a test names a file
 * and never a folder, and nothing is read from outside the clone.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const testDataDir = path.dirname(fileURLToPath(import.meta.url));
// The demo seeds these three and ships them in the api image; a second copy here would be 6.7 MB of
// the same bytes that could drift apart.
const demoDataDir = path.resolve(testDataDir, '../../api/demo-data');

const REAL_EXPORTS = {
  'od_readings_with_too_frequently_outlier_detections.csv': demoDataDir,
  '2021-05-02 07_12_51_M0_data.csv': demoDataDir,
  'CTPC06603.20200714 - 5GB1 - KDB.Control.csv': demoDataDir,
  'O2_2021-10-01-10-59 Chronograf Data.csv': testDataDir,
  // Bioreactor controller with an off-gas analyzer (DASGIP Control 4 with a GA4: exhaust O2 and CO2)
  'v4_20180726.Control.csv': testDataDir,
  // Micro-bioreactors (BioLector I and Pro)
  'JH_ShakerSteps_20170302_070206.csv': testDataDir,
  '224-MO_Coryne--2019-07-12-16-54-30.csv': testDataDir,
  // Plate readers (Tecan i-control, BioTek Gen5, BMG MARS, Molecular Devices SoftMax Pro)
  'sample_ODs.xlsx': testDataDir,
  'kinetic_helper_gene_growth_curve.txt': testDataDir,
  'BMG Labtech format.CSV': testDataDir,
  'MD_SMP_absorbance_endpoint_example01.txt': testDataDir,
  // Cell counters (Beckman Vi-CELL BLU and XR, ChemoMetec NucleoView and NC-View, Roche Cedex HiRes)
  'Beckman_Vi-Cell-BLU_example01_utf16.csv': testDataDir,
  'Beckman_Vi-Cell-XR_example07_instrumentOutput.txt': testDataDir,
  'chemometec_nucleoview_example01.csv': testDataDir,
  'chememotec_nc_view_example.csv': testDataDir,
  'roche_cedex_hires_example_1.csv': testDataDir,
  // Metabolite analyzers (Roche Cedex Bio HT, Nova BioProfile FLEX2) and offline HPLC results
  'roche_cedex_bioht_example03.txt': testDataDir,
  'SampleResultsDEVICE1232021-02-18_104838.csv': testDataDir,
  'BiomassHPLC_20200714.xlsx': testDataDir,
  // Spectrophotometer (Thermo Fisher GENESYS 30)
  'thermo_fisher_genesys30_example_01.tsv': testDataDir,
} as const;

export type RealExportName = keyof typeof REAL_EXPORTS;

export const REAL_EXPORT_NAMES = Object.keys(REAL_EXPORTS) as RealExportName[];

/** The SOURCES.md that names the file's origin, licence and checksum: the one beside the file. */
export function realExportSourcesPath(name: RealExportName): string {
  return path.join(REAL_EXPORTS[name], 'SOURCES.md');
}

export function realExportPath(name: RealExportName): string {
  return path.join(REAL_EXPORTS[name], name);
}
