/// A layered drawing of a directed graph (Sugiyama style), computed without any drawing: each
/// node gets a layer by the longest path from the sources, edges that skip layers get a
/// placeholder in every layer they cross (so no edge is drawn through a node), the order
/// within each layer is improved by barycenter sweeps to reduce crossings, and every box and
/// edge gets its coordinates. The same input always gives the same layout.
struct GraphLayout: Equatable {
    struct Point: Equatable {
        var x: Double
        var y: Double
    }

    /// A box: a node of the graph, or a placeholder an edge passes through.
    struct Box: Equatable {
        /// The node's index in the input; nil for a placeholder.
        var node: Int?
        var layer: Int
        var x: Double
        var y: Double
        var width: Double
        var height: Double

        func overlaps(_ other: Box) -> Bool {
            x < other.x + other.width && other.x < x + width && y < other.y + other.height
                && other.y < y + height
        }
    }

    /// An edge as drawn: from the bottom of its source to the top of its target, through the
    /// placeholders of the layers between, one point per layer boundary.
    struct Edge: Equatable {
        var from: Int
        var to: Int
        var points: [Point]
    }

    struct Metrics: Equatable {
        var nodeWidth = 168.0
        var nodeHeight = 34.0
        var placeholderWidth = 10.0
        var columnGap = 18.0
        var layerGap = 52.0
        var margin = 12.0
    }

    /// Each node's box, by input index.
    private(set) var nodes: [Box] = []
    /// The placeholders of edges that skip layers.
    private(set) var placeholders: [Box] = []
    private(set) var edges: [Edge] = []
    /// Each node's layer, by input index.
    private(set) var layers: [Int] = []
    /// Edges left out: those that would close a cycle (a run's graph has none).
    private(set) var droppedEdges = 0
    /// Edge crossings between adjacent layers in the final order.
    private(set) var crossings = 0
    private(set) var width = 0.0
    private(set) var height = 0.0

    /// Lays out `count` nodes and the edges `from → to` (a need to the job that needs it);
    /// edges naming no node and repeated edges are ignored.
    init(count: Int, edges input: [(from: Int, to: Int)], metrics: Metrics = Metrics(), sweeps: Int = 8) {
        guard count > 0 else { return }
        var seen = Set<[Int]>()
        let edges = input.filter { edge in
            edge.from >= 0 && edge.from < count && edge.to >= 0 && edge.to < count && edge.from != edge.to
                && seen.insert([edge.from, edge.to]).inserted
        }
        layers = Self.longestPathLayers(count: count, edges: edges)
        let kept = edges.filter { layers[$0.to] > layers[$0.from] }
        droppedEdges = edges.count - kept.count

        // Items per layer: nodes, then a placeholder per layer an edge crosses.
        var itemLayer = layers
        var itemNode: [Int?] = (0..<count).map { $0 }
        var chains: [(from: Int, to: Int, items: [Int])] = []
        for edge in kept {
            var chain = [edge.from]
            for layer in (layers[edge.from] + 1)..<layers[edge.to] {
                itemLayer.append(layer)
                itemNode.append(nil)
                chain.append(itemLayer.count - 1)
            }
            chain.append(edge.to)
            chains.append((edge.from, edge.to, chain))
        }
        let layerCount = (layers.max() ?? 0) + 1
        var upper = [[Int]](repeating: [], count: itemLayer.count)
        var lower = [[Int]](repeating: [], count: itemLayer.count)
        for chain in chains {
            for (a, b) in zip(chain.items, chain.items.dropFirst()) {
                lower[a].append(b)
                upper[b].append(a)
            }
        }
        // Nodes with no edge at all are set apart, in a grid under the layers: a run of many
        // independent jobs would otherwise make one row thousands of pixels wide.
        var isolated = [Bool](repeating: true, count: count)
        for edge in kept {
            isolated[edge.from] = false
            isolated[edge.to] = false
        }
        // Input order first; a placeholder goes where its edge's source is.
        var order = [[Int]](repeating: [], count: layerCount)
        for item in itemLayer.indices where item >= count || !isolated[item] {
            order[itemLayer[item]].append(item)
        }
        while order.last?.isEmpty == true { order.removeLast() }
        var position = [Double](repeating: 0, count: itemLayer.count)
        func number(_ order: [[Int]]) {
            for row in order { for (index, item) in row.enumerated() { position[item] = Double(index) } }
        }
        number(order)
        var best = order
        var bestCrossings = Self.crossings(order, lower: lower, position: position)
        for sweep in 0..<sweeps {
            let down = sweep % 2 == 0
            let rows = down ? Array(1..<max(1, order.count)) : Array((0..<max(0, order.count - 1)).reversed())
            for layer in rows where layer < order.count {
                let neighbours = down ? upper : lower
                let keyed = order[layer].map { item -> (Double, Double, Int) in
                    let others = neighbours[item]
                    let center =
                        others.isEmpty
                        ? position[item] : others.reduce(0) { $0 + position[$1] } / Double(others.count)
                    return (center, position[item], item)
                }
                order[layer] = keyed.sorted { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }.map(\.2)
                for (index, item) in order[layer].enumerated() { position[item] = Double(index) }
            }
            let now = Self.crossings(order, lower: lower, position: position)
            if now < bestCrossings {
                best = order
                bestCrossings = now
            }
        }
        order = best
        number(order)
        crossings = bestCrossings

        // Coordinates: each layer centred on the widest.
        let rowWidths = order.map { row in
            row.reduce(0.0) { sum, item in
                sum + (itemNode[item] == nil ? metrics.placeholderWidth : metrics.nodeWidth)
            } + Double(max(0, row.count - 1)) * metrics.columnGap
        }
        var widest = rowWidths.max() ?? 0
        var boxes = [Box](
            repeating: Box(node: nil, layer: 0, x: 0, y: 0, width: 0, height: 0), count: itemLayer.count)
        for (layer, row) in order.enumerated() {
            var x = metrics.margin + (widest - rowWidths[layer]) / 2
            let y = metrics.margin + Double(layer) * (metrics.nodeHeight + metrics.layerGap)
            for item in row {
                let width = itemNode[item] == nil ? metrics.placeholderWidth : metrics.nodeWidth
                boxes[item] = Box(
                    node: itemNode[item], layer: layer, x: x, y: y, width: width, height: metrics.nodeHeight)
                x += width + metrics.columnGap
            }
        }
        let rowsHeight =
            order.isEmpty
            ? 0 : Double(order.count) * metrics.nodeHeight + Double(order.count - 1) * metrics.layerGap
        let loose = (0..<count).filter { isolated[$0] }
        var gridHeight = 0.0
        if !loose.isEmpty {
            let step = metrics.nodeWidth + metrics.columnGap
            let columns = max(
                6, Int((widest + metrics.columnGap) / step), Int(Double(loose.count).squareRoot()))
            let top = metrics.margin + rowsHeight + (order.isEmpty ? 0 : metrics.layerGap)
            for (index, node) in loose.enumerated() {
                boxes[node] = Box(
                    node: node, layer: layers[node], x: metrics.margin + Double(index % columns) * step,
                    y: top + Double(index / columns) * (metrics.nodeHeight + metrics.columnGap),
                    width: metrics.nodeWidth, height: metrics.nodeHeight)
            }
            let rows = (loose.count + columns - 1) / columns
            gridHeight =
                Double(rows) * metrics.nodeHeight + Double(rows - 1) * metrics.columnGap
                + (order.isEmpty ? 0 : metrics.layerGap)
            widest = max(widest, Double(min(columns, loose.count)) * step - metrics.columnGap)
        }
        nodes = Array(boxes[0..<count])
        placeholders = Array(boxes[count...])
        self.edges = chains.map { chain in
            var points: [Point] = []
            for (index, item) in chain.items.enumerated() {
                let box = boxes[item]
                let center = box.x + box.width / 2
                if index > 0 { points.append(Point(x: center, y: box.y)) }
                if index < chain.items.count - 1 { points.append(Point(x: center, y: box.y + box.height)) }
            }
            return Edge(from: chain.from, to: chain.to, points: points)
        }
        width = widest + 2 * metrics.margin
        height = 2 * metrics.margin + rowsHeight + gridHeight
    }

    /// Each node's layer: 0 for a node that needs none, else one more than its deepest need.
    /// Nodes on a cycle (none in a run) are taken in input order, their unplaced needs ignored.
    static func longestPathLayers(count: Int, edges: [(from: Int, to: Int)]) -> [Int] {
        var incoming = [Int](repeating: 0, count: count)
        var outgoing = [[Int]](repeating: [], count: count)
        for edge in edges {
            incoming[edge.to] += 1
            outgoing[edge.from].append(edge.to)
        }
        var layer = [Int](repeating: 0, count: count)
        var done = [Bool](repeating: false, count: count)
        var ready = (0..<count).filter { incoming[$0] == 0 }
        var next = 0
        var placed = 0
        var lowestUnplaced = 0
        while placed < count {
            if next == ready.count {
                while done[lowestUnplaced] || ready.contains(lowestUnplaced) { lowestUnplaced += 1 }
                ready.append(lowestUnplaced)
            }
            let node = ready[next]
            next += 1
            guard !done[node] else { continue }
            done[node] = true
            placed += 1
            for target in outgoing[node] where !done[target] {
                layer[target] = max(layer[target], layer[node] + 1)
                incoming[target] -= 1
                if incoming[target] == 0 { ready.append(target) }
            }
        }
        return layer
    }

    /// Pairs of edges that cross between adjacent layers.
    private static func crossings(_ order: [[Int]], lower: [[Int]], position: [Double]) -> Int {
        var total = 0
        for row in order {
            var segments: [(Double, Double)] = []
            for item in row {
                for target in lower[item] { segments.append((position[item], position[target])) }
            }
            segments.sort { ($0.0, $0.1) < ($1.0, $1.1) }
            for i in segments.indices {
                for j in (i + 1)..<segments.count
                where segments[j].0 > segments[i].0 && segments[j].1 < segments[i].1 {
                    total += 1
                }
            }
        }
        return total
    }
}
