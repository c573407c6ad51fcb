// The system entries every installation starts with: quantity kinds and SI and common
// engineering units, with exact factors and offsets to each kind's canonical unit
// (canonical = value·factor + offset). Factors are written as exact decimals or
// fractions from their definitions (inch = 0.0254 m, pound = 0.45359237 kg,
// standard gravity 9.80665 m/s², US gallon = 231 in³, IT Btu = 1055.05585262 J), never
// as rounded doubles. Ids are name-derived (UUID v5 form), so every installation
// gives a system entry the same id and documents can refer to it portably.
import { createHash } from 'node:crypto';

export interface SeedUnit { name: string; symbol: string; factor: string; offset?: string }
export interface SeedQuantityKind {
  name: string;
  canonical: { name: string; symbol: string };
  /** Name of the quantity kind this one integrates to over time (flow → volume). */
  integratesTo?: string;
  units: SeedUnit[];
}

const LBF_N = '4.4482216152605'; // pound-force in newtons: 0.45359237 kg × 9.80665 m/s²

export const SYSTEM_QUANTITY_KINDS: SeedQuantityKind[] = [
  { name: 'Temperature', canonical: { name: 'kelvin', symbol: 'K' }, units: [
    { name: 'degree Celsius', symbol: '°C', factor: '1', offset: '273.15' },
    { name: 'degree Fahrenheit', symbol: '°F', factor: '5/9', offset: '45967/180' },
    { name: 'degree Rankine', symbol: '°R', factor: '5/9' },
  ] },
  { name: 'Pressure', canonical: { name: 'pascal', symbol: 'Pa' }, units: [
    { name: 'kilopascal', symbol: 'kPa', factor: '1000' },
    { name: 'megapascal', symbol: 'MPa', factor: '1000000' },
    { name: 'bar', symbol: 'bar', factor: '100000' },
    { name: 'millibar', symbol: 'mbar', factor: '100' },
    { name: 'pound-force per square inch', symbol: 'psi', factor: `${LBF_N}/0.00064516` },
    { name: 'standard atmosphere', symbol: 'atm', factor: '101325' },
    { name: 'millimetre of mercury', symbol: 'mmHg', factor: '133.322387415' },
  ] },
  { name: 'Volume', canonical: { name: 'cubic metre', symbol: 'm³' }, units: [
    { name: 'litre', symbol: 'L', factor: '0.001' },
    { name: 'US gallon', symbol: 'gal', factor: '0.003785411784' },
    { name: 'oil barrel', symbol: 'bbl', factor: '0.158987294928' },
  ] },
  { name: 'Volume flow rate', canonical: { name: 'cubic metre per second', symbol: 'm³/s' }, integratesTo: 'Volume', units: [
    { name: 'cubic metre per hour', symbol: 'm³/h', factor: '1/3600' },
    { name: 'litre per second', symbol: 'L/s', factor: '0.001' },
    { name: 'litre per minute', symbol: 'L/min', factor: '0.001/60' },
    { name: 'US gallon per minute', symbol: 'gal/min', factor: '0.003785411784/60' },
  ] },
  { name: 'Mass', canonical: { name: 'kilogram', symbol: 'kg' }, units: [
    { name: 'gram', symbol: 'g', factor: '0.001' },
    { name: 'tonne', symbol: 't', factor: '1000' },
    { name: 'pound', symbol: 'lb', factor: '0.45359237' },
  ] },
  { name: 'Mass flow rate', canonical: { name: 'kilogram per second', symbol: 'kg/s' }, integratesTo: 'Mass', units: [
    { name: 'kilogram per hour', symbol: 'kg/h', factor: '1/3600' },
    { name: 'tonne per hour', symbol: 't/h', factor: '1000/3600' },
    { name: 'pound per hour', symbol: 'lb/h', factor: '0.45359237/3600' },
  ] },
  { name: 'Length', canonical: { name: 'metre', symbol: 'm' }, units: [
    { name: 'millimetre', symbol: 'mm', factor: '0.001' },
    { name: 'centimetre', symbol: 'cm', factor: '0.01' },
    { name: 'kilometre', symbol: 'km', factor: '1000' },
    { name: 'inch', symbol: 'in', factor: '0.0254' },
    { name: 'foot', symbol: 'ft', factor: '0.3048' },
  ] },
  { name: 'Time', canonical: { name: 'second', symbol: 's' }, units: [
    { name: 'millisecond', symbol: 'ms', factor: '0.001' },
    { name: 'minute', symbol: 'min', factor: '60' },
    { name: 'hour', symbol: 'h', factor: '3600' },
    { name: 'day', symbol: 'd', factor: '86400' },
  ] },
  { name: 'Energy', canonical: { name: 'joule', symbol: 'J' }, units: [
    { name: 'kilojoule', symbol: 'kJ', factor: '1000' },
    { name: 'megajoule', symbol: 'MJ', factor: '1000000' },
    { name: 'kilowatt hour', symbol: 'kWh', factor: '3600000' },
    { name: 'megawatt hour', symbol: 'MWh', factor: '3600000000' },
    { name: 'British thermal unit', symbol: 'Btu', factor: '1055.05585262' },
  ] },
  { name: 'Power', canonical: { name: 'watt', symbol: 'W' }, integratesTo: 'Energy', units: [
    { name: 'kilowatt', symbol: 'kW', factor: '1000' },
    { name: 'megawatt', symbol: 'MW', factor: '1000000' },
    { name: 'mechanical horsepower', symbol: 'hp', factor: `550*0.3048*${LBF_N}` },
  ] },
  { name: 'Velocity', canonical: { name: 'metre per second', symbol: 'm/s' }, units: [
    { name: 'kilometre per hour', symbol: 'km/h', factor: '1000/3600' },
    { name: 'foot per second', symbol: 'ft/s', factor: '0.3048' },
  ] },
  { name: 'Frequency', canonical: { name: 'hertz', symbol: 'Hz' }, units: [
    { name: 'kilohertz', symbol: 'kHz', factor: '1000' },
    { name: 'revolution per minute', symbol: 'rpm', factor: '1/60' },
  ] },
  { name: 'Electric current', canonical: { name: 'ampere', symbol: 'A' }, units: [
    { name: 'milliampere', symbol: 'mA', factor: '0.001' },
    { name: 'kiloampere', symbol: 'kA', factor: '1000' },
  ] },
  { name: 'Voltage', canonical: { name: 'volt', symbol: 'V' }, units: [
    { name: 'millivolt', symbol: 'mV', factor: '0.001' },
    { name: 'kilovolt', symbol: 'kV', factor: '1000' },
  ] },
  { name: 'Density', canonical: { name: 'kilogram per cubic metre', symbol: 'kg/m³' }, units: [
    { name: 'gram per cubic centimetre', symbol: 'g/cm³', factor: '1000' },
  ] },
  { name: 'Dimensionless ratio', canonical: { name: 'one', symbol: '1' }, units: [
    { name: 'percent', symbol: '%', factor: '0.01' },
    { name: 'parts per million', symbol: 'ppm', factor: '0.000001' },
  ] },
];

/** A stable id for a system entry: UUID v5 layout over SHA-1 of the kind and name. */
export function systemEntryId(kind: string, name: string): string {
  const h = createHash('sha1').update(`historian:registry:${kind}:${name}`).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
