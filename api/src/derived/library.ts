/**
 * The built-in formulas every organisation starts with, as editable copies. Off-gas rates use the
 * inert-gas (N2) balance: the outlet flow is the inlet flow scaled by the ratio of inert fractions,
 * so OUR = F_in / (V x Vm) x (y_O2,in - y_O2,out x y_inert,in / y_inert,out), with F_in the air flow in
 * L/min, V the working volume in L and Vm = 22.414 L/mol (ideal gas at 0 degC, 1 atm); exhaust
 * fractions are instrument readings in %.
 */

export interface LibraryFormula {
  key: string;
  name: string;
  unit: string;
  expression: string;
  description: string;
}

/** mmol/(L h) per (L/min of gas / L of broth), at the molar volume of an ideal gas: 60 min/h x 1000 mmol/mol / 22.414 L/mol. */
const GAS_RATE_FACTOR = '(60 * 1000 / 22.414)';
const INERT_RATIO = '((1 - inlet_o2_fraction - inlet_co2_fraction) / (1 - [exhaust_o2] / 100 - [exhaust_co2] / 100))';
const OUR = `${GAS_RATE_FACTOR} * [gas_flow_rate] / working_volume * (inlet_o2_fraction - [exhaust_o2] / 100 * ${INERT_RATIO})`;
const CER = `${GAS_RATE_FACTOR} * [gas_flow_rate] / working_volume * ([exhaust_co2] / 100 * ${INERT_RATIO} - inlet_co2_fraction)`;

export const DERIVED_LIBRARY: readonly LibraryFormula[] = [
  {
    key: 'our', name: 'OUR', unit: 'mmol/L/h', expression: OUR,
    description: 'Oxygen uptake rate from the off-gas O2 and CO2 fractions (%), the air flow (L/min) and the working volume, by the N2 balance.',
  },
  {
    key: 'cer', name: 'CER', unit: 'mmol/L/h', expression: CER,
    description: 'Carbon dioxide evolution rate from the off-gas O2 and CO2 fractions (%), the air flow (L/min) and the working volume, by the N2 balance.',
  },
  {
    key: 'rq', name: 'RQ', unit: 'mol/mol', expression: `(${CER}) / (${OUR})`,
    description: 'Respiratory quotient: CO2 evolved per O2 taken up (CER / OUR).',
  },
  {
    key: 'specific_growth_rate', name: 'Specific growth rate', unit: '1/h', expression: "log_linear_slope([optical_density], '2h')",
    description: 'Slope of ln(OD) over the last two hours, per hour.',
  },
  {
    key: 'cumulative_feed', name: 'Cumulative feed', unit: 'mL', expression: "time_integral([feed_rate], 'min')",
    description: 'Volume fed since the start of the unit operation, from the feed rate in mL/min.',
  },
  {
    key: 'biomass_yield', name: 'Biomass yield on substrate', unit: 'g/g',
    expression: "log_linear_slope([optical_density], '2h') * [optical_density] * biomass_per_od * working_volume / ([feed_rate] * 60 / 1000 * feed_concentration)",
    description: 'Biomass formed per substrate fed, at each moment: growth rate x biomass over the substrate feed rate (feed rate in mL/min).',
  },
];
