import t from 'tap';
import { encodeChunk, FORMAT_VERSION } from '../../../src/storage/encoding/chunk.js';
import { sectionOffsets } from '../../../src/storage/encoding/chunk-header.js';
import { toColumns } from '../../helpers/chunk-arbitraries.js';
import { checkGoldenChunk, checkGroupDirectory, checkSameHeaderFacts, GOLDEN_HEX_V3, GOLDEN_RUNS, T0, V4_RUNS } from '../../helpers/chunk-golden-runs.js';

// Golden bytes pin format version 4: the version 3 header with tag 0x40, and the integer
// column's FRAME, FRAME_DELTA and RICE layouts (FORMAT.md "Integer column"): a change to any
// layout shows here as a diff of hex. The runs are those of the version 2 and 3 goldens
// (test/helpers/chunk-golden-runs.ts), so the files show what each version spends on one
// chunk, plus two runs that reach the new layouts: 'noise split' (time residuals, float
// signs and mantissas in one FRAME each, exponents in RICE) and 'counter walk' (FRAME_DELTA).
const HEX: Record<string, string> = {
  'decimal': [
      '4000002a36fe9c971709100d0505000016a21fba17a21f9a0301020400010000e3b4ee9800c0843de907000400010401',
      '05020101000100049a030102020301060100018003052fd10c0b',
    ].join(''),
  'split': [
      '4000002a36fe9c97170f092b0a030101f00301000000000000000080343333333333d33f343333333333d33f01000000',
      '00000000020000007fbc49410001020002000101020100030001020101010002fa0f01f90f020002e6cc1901e5cc1902',
      '0003e8cc99b30601e7cc99b3060102010003800301ff01017f010e6d95ab',
    ].join(''),
  'int64': [
      '4100000000000000800f071605030000f00e07000000000000000080ffffffffffffff7fffffffffffffff7f00000000',
      '0000000000010000c235be2a0007010001000301feffffffffffffffff0102ffffffffffffffffff0100018003036857',
      'fdc6',
    ].join(''),
  'boolean': [
      '4200002a36fe9c9717090b080806000209050003000001008094ebdc03000000682361ac008094ebdc03010001000600',
      '030003020201010002800304ff0202248b4530',
    ].join(''),
  'enum': [
      '4400000000000000000807080e040000020303020604020700010000c95eab33006401000100040003060204010b0100',
      '02feffffff1f01fdfcffff1f0336c7ae64',
    ].join(''),
  'string': [
      '4300002a36fe9c9717070b1505040000f91e0001000000002d7228360080c8afa02501000100040303422d3106c3a9f0',
      '9d849e00000300020201020100018003041c56f4d3',
    ].join(''),
  'gapped time': [
      '4100002a36fe9c97170a160c0b05000206c53e00c53ec801000a14808af7ae16010000009f106b7b02c0843de8070002',
      '0003080200040001040101010802000004c80101020208010a010003800302ff02028003010c7d3415',
    ].join(''),
  'group directory': [
      '4000002a36fe9c9717128001ec010cac02000a36aaa712d99c0d8d2f9eb802f2011c830180b4e8ab25010803c0843da6',
      'd60f9eb802f2011cd80600c1010c4001180000005606619100c0843deb07040003050000df49920466a7d9f7496a8049',
      '92a406000060dff77ddf4d92e427000000603625499224350d807dcf000000b0effbbeeffb3e4905b04f9224354d4992',
      '24c9efb69da629c9e7fbbe4f902435c06edb194900eb25494d5392cfd2344d499224499224f9494d53f2939aa6694af2',
      'fb3e0000000000000003049eb80206270e75724a092c643219a5011a42f41562850ca50350c032158796a09df75cc3d9',
      '95e3715e904828c8f210d1b841a1980901d3a003d13cd1981922e12401377924445209815040b88c1c04395b711c5167',
      '788f181a89d99c1786424bc494c563885ef48544906c45157dd240799a2425e6a4589f811cdda8301db689daa0504e68',
      '656430890f7000e6f39ce3a661a70255dba67422f10060a66de0c12140182853001426a668907671584066cf80621724',
      '7ecd2825483752053a66e3b921c5758a08c969e700821c0312a2d498c8945820e77488116e9394045c96202085561e13',
      '000000000003800364ff020a8003be010dd51f46',
    ].join(''),
  'noise split': [
      '4000002a36fe9c97171044e40806a0010000f69d7cc10cff5cbcd5f1afcd960ac00cdbadab57ce0a409a9999d9173cbf',
      '3f78203376cf9f04c0000100060dc96800c0843d64030305035af139bd8a2c1583732859f0d9fffff32ea9211a29c1e6',
      '5d54ccbccbc7e89dd87314a055954f859dbb80edd8c01191f41c67a85e7ca7cb0db08d9e01030100e0c187071f1e3c78',
      'f0e0c183070f1e3c78f8f0c1058080100a000000e0c903f07441a70b5d0f5d2e5e171d5d3c5dbc2e4f174f974b97a78b',
      '47d745d74397073a793400000314dc166936df23197aea46bf6a395c85509b57e3c2815ff83b22ba8ffa8f8144653145',
      '15cff4835bd5ed551f917a938f97ee060a9f22c8a7fd2d414c3b557dbe9984f54c0670d8fa4c1bf6fdbe556255136f2d',
      '9cfdb27068a04afa6e079e443578ef049858fc29683343bdbdd19e544e40bdd388c583d5cb503190b8f185a808297a55',
      '7539d32b179cba57a2cc9cd2f35a78661e9af424af99653e58008afe51aaba19748522d962deea059ef8b74275f671f4',
      'b90616f4c6d683e0081615090000e213a04e7e58a9e7ce42aad336713be17ed4a373037062692add147760862af234de',
      'b41663d04f44e839457715815f48327ded1a54e0902afb153066abbe519469d5dd0f5406a3113d8364c7a598b910f5a9',
      'eceb1e88dae56c24ff0364b9480e48b4458089f2b2e0ac1420938aacb9a4d4e422dbc62c4046a875e8e1696f73b1e113',
      '359caa2ddf32ed1d12f29ec134ae8896a907bd1dd861249d9d790313af04d65966c795bdcf82418457efc9a60c5b4467',
      '6b3006ddfbf1c6825e27003b7a1c0e1bc69c273146771e16f08856e8381fa2490320c492d6870100f8d41ed1759b46d3',
      '20e4f89ecf04a95a3d47c55f599b6902b07c94524d9f52b310da9c2f8e7df9a017368a7cd22d6b28e581b45f33342879',
      'fd003f5314d49fa81a1177a7e0ece629f553b3631f3aa33d45b595100b24f0f512479c38e6a1351f81cc67a024576ae3',
      'b062941cde6461a7d6d7e7d72c04666b50dd49b0cc992f41989d92cfac1973f3b798b4581bf833d65f2c6fa4085fb499',
      '46411253d4a44ea3ccd7c5b08d9092aca06fa604b28f115d3c4f4df52a5b645a1699b24874fa2a08e42779ae67ab93e9',
      '4cd4eec11bb3e9867265b74448b860664cc10489b4dcbd58a86b77de03554b3291a096982ead50b81d14cb03fd4b9b54',
      'a08ca662732259033d06012716db35006460ccac1e0ca8eb39d2d6610e748608d9a28047f2fdc1b539f08486cb085169',
      '8809c0b779df0476738ab53f9d27b017147bd77f56779f8005e1bc0eb1f5e92526ce59b78de9c632f99d1206cfe06b14',
      'bb3459b1228ac9cb5c9515b572fd1e1f92f9d11deb1570c401038c25eb2ed414b778f03c2cbff7976d86855fbb2c2252',
      'a80c360dd3774059cb848412794fe52ac5e36cc857b24f5238f9803aebae508c90405f53c8b4c12c9a93f75f4675e4be',
      'c828a58a752d4324264a6a60d408773b43a8efa4864a5f9f11259d574260159250362cae6a1633a3f96f93a3049b4d3d',
      'd166d7f18026d44d917c15c1000000000bd321d983e19de8c67955667b92302b1c1de34c340a3a3d232d156a383ca287',
      'd70ebd02680c1ce4195e76ee5ae6f8656607d7cb68060b167c805460504b98ab84771d3662f9b18c2f52334dd7560d03',
      '4526f5a04e9cb27bdecca18ffe4447a8c336d2ec6ed55ed305074b6f1d34b6631c8226b799ebcf8f05d4717034cab2ad',
      '73e94e1ad65bb86d00018003a0011551ac4d',
    ].join(''),
  'counter walk': [
      '4100002a36fe9c971710a401a0010690030000098f03008f0384897a00b107e20e00010800c0843d82d00f84897a00f4',
      '04fd00ee0900ba028f0000005605c6d000c0843de807030301000000e1e9139cf3ccb14992dff77de0504aa28a395e9f',
      '6eab8cbb9c8afadcf79d488d078cc1a771b83eeb557e7abce8de6a5996f5c48bb78af34a3775063dc0b3f55931d4727e',
      'ba7ec0b6b7e6d84e4ea741b40fd43e1543975b0179150e6e374729893ba2b13e709bcdf4e95e5331fb60ae472aae4b92',
      '7d1850a03ad915bace60e534fe6c3456101bd148298d75f23fd5b9bedb079def822a0000000484897a030000105b516d',
      '37b2e9280a000989a58410a424519908a269011180402e10241045937144a8b1024291120275ddc4094d410940968d14',
      'bb81c232b0e2d25108584100072585b485ed0a9269b1946ca4a2a5c648a010091ab9a690286010a98425436014494280',
      '54296d304a09b2ae0457124003652532864b02429a4260894001232906032000524351ed8650620271c20a9140d34064',
      '850400000001800390034ac87c3d',
    ].join(''),
};

t.equal(FORMAT_VERSION, 4, 'these goldens are for format version 4');


for (const { name, run } of [...GOLDEN_RUNS, ...V4_RUNS]) {
  t.test(`a ${name} chunk encodes to its version 4 golden bytes, whose header states its points and which decode to them`, async (t) => {
    const cols = toColumns(run);
    t.equal(Buffer.from(encodeChunk(cols)).toString('hex'), HEX[name], 'encoding is byte for byte the golden');
    const bytes = new Uint8Array(Buffer.from(HEX[name], 'hex'));
    checkGoldenChunk(t, bytes, run, 4);
  });
}

t.test('the group directory golden (its columns in FRAME_DELTA) describes its two groups exactly', async (t) => {
  checkGroupDirectory(t, new Uint8Array(Buffer.from(HEX['group directory'], 'hex')), 4);
});

t.test('a version 4 chunk and the version 3 chunk of the same points differ only in the tag byte when no new layout is used', async (t) => {
  for (const name of ['decimal', 'split', 'int64', 'boolean', 'enum', 'string', 'gapped time']) {
    const v3 = Buffer.from(GOLDEN_HEX_V3[name], 'hex'), v4 = Buffer.from(HEX[name], 'hex');
    t.equal(v4[0], (v3[0] & 15) | 0x40, `${name}: tag`);
    // Everything but the tag and the two CRCs (the header's at timesAt - 4, the trailer) is the same.
    const crcAt = sectionOffsets(v4).timesAt - 4;
    for (const b of [v3, v4]) { b[0] = 0; b.fill(0, crcAt, crcAt + 4); b.fill(0, b.length - 4); }
    t.same(v4, v3, `${name}: the same bytes`);
  }
});

t.test('render\'s header view and readChunkHeader read the same facts from the version 3 and version 4 bytes of a chunk', async (t) => {
  const base = T0 - 5_000_000_000n;
  for (const name of ['decimal', 'split', 'int64', 'string', 'group directory']) {
    checkSameHeaderFacts(t, new Uint8Array(Buffer.from(GOLDEN_HEX_V3[name], 'hex')), new Uint8Array(Buffer.from(HEX[name], 'hex')), 3, name, base);
  }
});
